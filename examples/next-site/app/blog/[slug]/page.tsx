import { CdsnapApiError, type ContentDetail } from "@cdsnap/client";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cms } from "../../../lib/cms";
import { referenceId, renderBody } from "../../../lib/render";

interface Props {
  params: Promise<{ slug: string }>;
}

async function postBySlug(slug: string): Promise<ContentDetail> {
  try {
    return await cms.contentBySlug(slug);
  } catch (error) {
    if (error instanceof CdsnapApiError && error.code === "not_found") notFound();
    throw error;
  }
}

// Every published post is rendered at build time; one published later is rendered on its first visit.
export async function generateStaticParams(): Promise<{ slug: string }[]> {
  const { items } = await cms.contents();
  return items.map(({ slug }) => ({ slug }));
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { seoMetadata } = await postBySlug((await params).slug);
  return { title: seoMetadata.title, description: seoMetadata.description };
}

export default async function Post({ params }: Props) {
  const post = await postBySlug((await params).slug);
  const references = post.references ?? [];
  return (
    <article>
      <h1>{post.title}</h1>
      <p>
        {post.authorName}, <time dateTime={post.publishedAt}>{post.publishedAt}</time>
      </p>
      <div dangerouslySetInnerHTML={{ __html: renderBody(post.content, references) }} />
      {references.length > 0 && (
        <section>
          <h2>References</h2>
          <ol>
            {references.map((reference, i) => (
              <li key={i} id={referenceId(i + 1)}>
                <a href={reference.url}>{reference.source}</a>
                {reference.asOf && ` (${reference.asOf})`}
                {reference.claim && <>: &ldquo;{reference.claim}&rdquo;</>}
              </li>
            ))}
          </ol>
        </section>
      )}
    </article>
  );
}
