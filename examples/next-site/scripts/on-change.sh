#!/bin/sh
# cdsnap --on-change for a Next.js site: the change event (JSON on stdin) purges
# the CDN in front of cdsnap serve, then goes to the site's app/api/revalidate.
#
#   NEXT_SITE_URL      where the Next.js site answers, e.g. http://127.0.0.1:3000
#   REVALIDATE_SECRET  the secret the site's REVALIDATE_SECRET holds: letters and
#                      digits (openssl rand -hex 32)
#   CDN_PURGE          optional: a command that purges the CDN, given the event on
#                      its stdin (docs/cdn.md's purge-varnish.sh, or your CDN's
#                      purge by tag). Leave it unset when the site reads serve directly.
#
#   cdsnap serve … --on-change ./scripts/on-change.sh
set -eu
: "${NEXT_SITE_URL:?is not set}" "${REVALIDATE_SECRET:?is not set}"

event=$(mktemp)
trap 'rm -f "$event"' EXIT
cat > "$event"

# The CDN first: Next refetches what it revalidates, and would get the stale
# answer again from a CDN not purged yet. A failed purge ends the run here (and
# serve logs it) for the same reason.
if [ -n "${CDN_PURGE:-}" ]; then
  sh -c "$CDN_PURGE" < "$event"
fi

# The secret goes to curl through its config on stdin, not as an argument that
# any user of the machine could read in the process list.
printf 'header = "authorization: Bearer %s"\n' "$REVALIDATE_SECRET" |
  curl --config - --fail --silent --show-error --max-time 10 --output /dev/null \
    --request POST --header "content-type: application/json" \
    --data-binary "@$event" "$NEXT_SITE_URL/api/revalidate"
