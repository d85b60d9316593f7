import { cdsnapBlocks, cdsnapCategories, cdsnapOrganization, cdsnapPosts } from "@cdsnap/astro";
import { defineCollection } from "astro:content";
import { cms } from "./cms";

export const collections = {
  posts: defineCollection({ loader: cdsnapPosts(cms) }),
  homeBlocks: defineCollection({ loader: cdsnapBlocks({ ...cms, pages: ["home"] }) }),
  categories: defineCollection({ loader: cdsnapCategories(cms) }),
  organization: defineCollection({ loader: cdsnapOrganization(cms) }),
};
