// Discord's public names, reached as @herald/platforms/discord (the package's entry names no
// platform: test/platform-names.test.ts); the rest of Herald reaches it through PLATFORM_ADAPTERS.
export { DiscordSender, discordNonce, classifyDiscordError, DISCORD_LIMIT } from './discord-sender.ts';
export { DiscordIngress, normalizeDiscordMessage, discordBotIdOf, discordCommandDefinitions, deployDiscordCommands } from './discord-ingress.ts';
export type { DiscordIngressOptions } from './discord-ingress.ts';
export { discordAdapter } from './discord-adapter.ts';
