import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** ../shared/models next to the repository (absent in a user's clone: tests that need it skip). */
export const sharedModels = fileURLToPath(new URL('../../../shared/models/', import.meta.url));
export const haveSharedModels = existsSync(sharedModels);
if (!haveSharedModels) console.warn(`test/text: ${sharedModels} is absent; tests that need the shared models are skipped`);

export const modelDir = (name: string): string => `${sharedModels}${name}`;
