export { MAIN_PROFILE, PROFILE_NAME, profileNameSchema } from './profile-name.ts';
export { modelRefs, modelSettingsSchema, storedModelSettings, unknownProvider } from './model-settings.ts';
export type { ModelSettings } from './model-settings.ts';
export { bindingsOfProfile } from './profile-bindings.ts';
export { BINDING_FIELDS, boundAccount, bindingListSchema, bindingRuleSchema, MAX_BINDINGS, matchOf, profileFor, specificity, winningBinding } from './binding-rules.ts';
export type { BindingFacts, BindingField, BindingRule } from './binding-rules.ts';
export { readBindings, replaceBindings, routeProfile } from './binding-store.ts';
export type { ReplaceOutcome } from './binding-store.ts';
export type { ProfileBinding } from './profile-bindings.ts';
export {
  activeProfileIds,
  createProfile,
  deleteProfile,
  listProfiles,
  profileExists,
  profileModelSettings,
  profileState,
  setProfileModel,
} from './profile-store.ts';
export type { CreateOutcome, DeleteOutcome, ProfileCompanions, ProfileSummary } from './profile-store.ts';
export { deleteProfileDocument, profileDocuments, profileRecord, putProfileDocument, updateProfileSettings } from './profile-settings.ts';
export type { ProfileDocument, ProfileRecord, ProfileSettings } from './profile-settings.ts';
