import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Encryption at rest of the private halves of signing keys (ed25519): AES-256-GCM
 * under the deployment's key encryption key (config `signing.keyEncryptionKey`,
 * env STREAMGATE_KEY_ENCRYPTION_KEY; docs/operations.md#signing-key-encryption).
 * The key id is the additional authenticated data, so a ciphertext moved to
 * another row does not decrypt. Stored as text:
 *
 *   v1.<base64 12-byte IV>.<base64 16-byte tag>.<base64 ciphertext>
 *
 * Neither the key nor a plaintext is ever logged or put in an error message.
 */
export class KeyEncryption {
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    this.#key = key;
  }

  /**
   * The configured setting (64 hex digits, or standard base64 of 32 bytes), or
   * null when it is "" (no encryption key: ed25519 keys cannot be made or used).
   */
  static fromSetting(setting: string): KeyEncryption | null {
    const value = setting.trim();
    if (value === '') return null;
    const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
    if (key.length !== 32) throw new Error('signing.keyEncryptionKey must be 32 bytes: 64 hex digits or standard base64 (44 characters)');
    return new KeyEncryption(key);
  }

  encrypt(plaintext: Buffer, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join('.');
  }

  /** The plaintext; throws (without saying more) when the key, the AAD or the stored text is wrong. */
  decrypt(stored: string, aad: string): Buffer {
    const parts = stored.split('.');
    if (parts.length !== 4 || parts[0] !== 'v1') throw new Error('not an encrypted signing key (v1)');
    const iv = Buffer.from(parts[1]!, 'base64');
    const tag = Buffer.from(parts[2]!, 'base64');
    if (iv.length !== 12 || tag.length !== 16) throw new Error('not an encrypted signing key (v1)');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64')), decipher.final()]);
    } catch {
      throw new Error('the signing key does not decrypt: wrong signing.keyEncryptionKey, or the stored key was altered');
    }
  }

  /** Never print the key (util.inspect, JSON.stringify of a holder). */
  toJSON(): string {
    return '[KeyEncryption]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[KeyEncryption]';
  }
}
