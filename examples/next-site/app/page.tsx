import Link from "next/link";
import { cms } from "../lib/cms";
import { POST_PATH } from "../lib/render";

export default async function Home() {
  const [organization, { items: posts }] = await Promise.all([cms.organization(), cms.contents()]);
  return (
    <main>
      <h1>{organization.name}</h1>
      <p id="business-description">{organization.businessDescription}</p>
      {organization.businessOffers.length > 0 && (
        <ul>
          {organization.businessOffers.map((offer) => (
            <li key={offer.name}>
              <strong>{offer.link ? <a href={offer.link}>{offer.name}</a> : offer.name}</strong>: {offer.description}
            </li>
          ))}
        </ul>
      )}
      <h2>Journal</h2>
      <ul>
        {posts.map((post) => (
          <li key={post.id}>
            <Link href={POST_PATH + post.slug}>{post.title}</Link> <time dateTime={post.publishedAt}>{post.publishedAt}</time>
          </li>
        ))}
      </ul>
    </main>
  );
}
