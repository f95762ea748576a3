// A module resolve hook (node:module register): adds the "@herald/source" condition, which the
// command line's --conditions would add, for processes started as `node cli/bin/herald-dev.js`.
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, '@herald/source'] });
}
