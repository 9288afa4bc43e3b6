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
 * Rotation: the new key becomes `keyEncryptionKey` and the old one moves to
 * `previousKeyEncryptionKeys`; stored keys still decrypt (GCM's tag tells which
 * key fits), new ones are encrypted under the new key, and `streamgate admin
 * reencrypt-signing-keys` rewrites the old ones, after which the previous key
 * can go.
 *
 * Neither the key nor a plaintext is ever logged or put in an error message.
 */
export class KeyEncryption {
  /** The current key first (it encrypts), then the previous ones (they only decrypt). */
  readonly #keys: Buffer[];

  private constructor(keys: Buffer[]) {
    this.#keys = keys;
  }

  /**
   * The configured settings (each 64 hex digits, or standard base64 of 32
   * bytes), or null when the current one is "" (no encryption key: ed25519 keys
   * cannot be made or used).
   */
  static fromSetting(setting: string, previous: readonly string[] = []): KeyEncryption | null {
    const value = setting.trim();
    if (value === '') {
      if (previous.length > 0) throw new Error('signing.previousKeyEncryptionKeys needs signing.keyEncryptionKey: the current key encrypts, the previous ones only decrypt');
      return null;
    }
    return new KeyEncryption([value, ...previous.map((p) => p.trim())].map(parseKey));
  }

  encrypt(plaintext: Buffer, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#keys[0]!, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join('.');
  }

  /** The plaintext; throws (without saying more) when no key fits, the AAD or the stored text is wrong. */
  decrypt(stored: string, aad: string): Buffer {
    return this.open(stored, aad).plaintext;
  }

  /**
   * The plaintext, and whether it was encrypted under the current key (false:
   * under a previous one, so `reencrypt` should rewrite it).
   */
  open(stored: string, aad: string): { plaintext: Buffer; current: boolean } {
    const parts = stored.split('.');
    if (parts.length !== 4 || parts[0] !== 'v1') throw new Error('not an encrypted signing key (v1)');
    const iv = Buffer.from(parts[1]!, 'base64');
    const tag = Buffer.from(parts[2]!, 'base64');
    if (iv.length !== 12 || tag.length !== 16) throw new Error('not an encrypted signing key (v1)');
    const ciphertext = Buffer.from(parts[3]!, 'base64');
    for (const [i, key] of this.#keys.entries()) {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(tag);
      try {
        return { plaintext: Buffer.concat([decipher.update(ciphertext), decipher.final()]), current: i === 0 };
      } catch {
        // not this key: try the next
      }
    }
    throw new Error('the signing key does not decrypt: wrong signing.keyEncryptionKey (and previousKeyEncryptionKeys), or the stored key was altered');
  }

  /** `stored` under the current key, or null when it is under it already. */
  reencrypt(stored: string, aad: string): string | null {
    const { plaintext, current } = this.open(stored, aad);
    try {
      return current ? null : this.encrypt(plaintext, aad);
    } finally {
      plaintext.fill(0);
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

function parseKey(value: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error('signing.keyEncryptionKey and previousKeyEncryptionKeys must be 32 bytes: 64 hex digits or standard base64 (44 characters)');
  return key;
}
