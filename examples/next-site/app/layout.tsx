import type { Metadata } from "next";
import type { ReactNode } from "react";
import { cms } from "../lib/cms";

export async function generateMetadata(): Promise<Metadata> {
  const organization = await cms.organization();
  return { title: organization.name, description: organization.businessDescription };
}

// System fonts only: a font fetched from Google at build time would make the build need the network.
export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: "system-ui, sans-serif", maxWidth: "44rem", margin: "2rem auto", padding: "0 1rem", lineHeight: 1.5 }}>
        {children}
      </body>
    </html>
  );
}
