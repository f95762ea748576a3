export { MAIN_PROFILE, PROFILE_NAME, profileNameSchema } from './profile-name.ts';
export { modelRefs, modelSettingsSchema, storedModelSettings, unknownProvider } from './model-settings.ts';
export type { ModelSettings } from './model-settings.ts';
export { bindingsOfProfile } from './profile-bindings.ts';
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
export type { CreateOutcome, DeleteOutcome, ProfileSummary } from './profile-store.ts';
