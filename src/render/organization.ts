import { organizationSchema, type Organization } from "../model/api.js";
import type { OrgRecord } from "../model/snapshot.js";

/**
 * D4: the organization response. Built member by member from the public record
 * and parsed strictly, so nothing but the contract's members can reach the file.
 * The write proxy calls this too, after a PATCH.
 */
export function renderOrganization(org: OrgRecord): Organization {
  return organizationSchema.parse({
    id: org.id,
    name: org.name,
    slug: org.slug,
    integrations: {
      googleAnalyticsId: org.integrations.googleAnalyticsId,
      metaPixelId: org.integrations.metaPixelId,
      gtmContainerId: org.integrations.gtmContainerId,
    },
    businessDescription: org.businessDescription,
    businessOffers: org.businessOffers.map((o) =>
      o.link === undefined ? { name: o.name, description: o.description } : { ...o },
    ),
  });
}
