/**
 * Whether a tool call succeeded, for tools whose result is a JSON object with a boolean `success`
 * (memory, skill_manage): true only for an object whose `success` is true, whatever the key order.
 * The same rule is herald_tool_succeeded in SQL (migrations/functions/herald_tool_succeeded.sql),
 * which the completion event uses; libs/knowledge/test/review-store.test.ts checks they agree.
 */
export function toolSucceeded(content: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return false;
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && (parsed as { success?: unknown }).success === true;
}
