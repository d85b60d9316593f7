/**
 * The write proxy's only writes: the two business attributes (D7). Each call
 * runs in one BEGIN IMMEDIATE transaction; the values are already validated.
 */
import type { StoredOffer } from "../model/business.js";
import { prepared, type Db } from "./open.js";

export function storeBusinessDescription(db: Db, orgId: string, description: string): void {
  prepared(db, "UPDATE organizations SET business_description = ? WHERE id = ?").run(description, orgId);
}

/** The body is the whole list (interface rule 1): replace, keeping the body's order. */
export function storeBusinessOffers(db: Db, orgId: string, offers: readonly StoredOffer[]): void {
  prepared(db, "DELETE FROM business_offers WHERE org_id = ?").run(orgId);
  const insert = prepared(db, "INSERT INTO business_offers (org_id, position, name, description, link) VALUES (?, ?, ?, ?, ?)");
  offers.forEach((offer, position) => insert.run(orgId, position, offer.name, offer.description, offer.link ?? null));
}
