import { cdsnapLivePosts } from "@cdsnap/astro";
import { defineLiveCollection } from "astro:content";
import { cms } from "./cms";

export const collections = {
  livePosts: defineLiveCollection({ loader: cdsnapLivePosts(cms) }),
};
