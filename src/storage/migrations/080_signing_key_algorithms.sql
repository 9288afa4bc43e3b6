-- Issue 25: signing keys of another algorithm. `hmac-sha256` keys (every key
-- before this migration) keep their secret in `secret`; `ed25519` keys have no
-- secret but a key pair: the public key (`whpk_<base64 of its 32 raw bytes>`,
-- published) and the private key (PKCS#8), encrypted with AES-256-GCM under the
-- deployment's signing.keyEncryptionKey (src/storage/key-encryption.ts): the
-- database alone does not give it away.
ALTER TABLE signing_keys
  ADD COLUMN algorithm text NOT NULL DEFAULT 'hmac-sha256',
  ADD COLUMN public_key text,
  ADD COLUMN private_key_encrypted text,
  ALTER COLUMN secret DROP NOT NULL,
  ADD CONSTRAINT signing_keys_algorithm_check CHECK (
    (algorithm = 'hmac-sha256' AND secret IS NOT NULL AND public_key IS NULL AND private_key_encrypted IS NULL)
    OR (algorithm = 'ed25519' AND secret IS NULL AND public_key IS NOT NULL AND private_key_encrypted IS NOT NULL)
  );
