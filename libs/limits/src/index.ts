/**
 * What a session may spend: quota and budget limits checked at accept and per turn (the refusal
 * and its error), budgets with their warnings, and the usage report behind /usage and the API.
 */
export { LimitExceededError, limitPassed, limitsArgument, tokenLimitsArgument } from './limit-refusal.ts';
export type { BudgetRef, LimitName } from './limit-refusal.ts';
export { filesAdmission } from './attachment-allowance.ts';
export type { FilesAdmission, FilesSender } from './attachment-allowance.ts';
export { BUDGET_WARNING_SHARE, budgetPassed, budgetsOn, budgetStates, checkBudgets, formatUsd, listBudgets, removeBudget, setBudget, turnWarnings, warnBudgets } from './budgets.ts';
export type { BudgetRow, BudgetState, WarningContext } from './budgets.ts';
export { USAGE_GROUPS, usageReply, usageReport, utcDayStart, utcMonthStart } from './usage-report.ts';
export type { UsageGroup, UsageQuery, UsageRow, UsageTotals } from './usage-report.ts';
export { countAttachmentBytes } from './attachment-allowance.ts';
