/**
 * The overview's list of unhealthy targets: a slot kept for the target-health
 * work (issue 26, item 2), which fills this file in. Renders nothing until then.
 */
export function UnhealthyTargets(_props: { tenant: string }) {
  return null;
}
