/** The cipher moved to @parley/platform: conversation data keys are wrapped with it too. */
export { keyIdOf, MISSING_KEY_MESSAGE, parseKey, SecretCipher, type Sealed } from '@parley/platform';
