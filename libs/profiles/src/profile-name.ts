import { z } from 'zod';

/** The profile every deployment has: inbound traffic goes to it unless told otherwise; never deleted. */
export const MAIN_PROFILE = 'main';

/** Lowercase letters, digits and dashes, at most 40 characters (a session key and a URL segment). */
export const PROFILE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,39})$/;

export const profileNameSchema = z.string().max(40, { error: 'at most 40 characters' }).regex(PROFILE_NAME, { error: 'lowercase letters, digits and dashes, at most 40 characters' });
