#!/usr/bin/env bash
# Makes the test PKI of the local broker's SASL_SSL listener, once: a CA, a
# broker certificate for localhost and 127.0.0.1 (in a PKCS12 key store, with
# the CA in a PKCS12 trust store) and a client certificate for the mTLS test,
# all under ${STREAMGATE_KAFKA_TLS_DIR:-$STREAMGATE_CACHE/kafka-tls}. Called by
# up.sh; a second run finds .complete and does nothing. Delete the folder (and
# restart the broker with down.sh && up.sh) to make a new CA.
#
#   ca.pem               the CA clients trust (kafka.ssl.caFile)
#   client.pem client.key  a client certificate signed by the CA
#   broker.p12 truststore.p12  what the broker reads (see config/kafka/server.properties)
set -euo pipefail

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Bump when the files made here change, so existing folders are remade.
TLS_LAYOUT=1

[[ -f "$KAFKA_TLS_DIR/.complete" && "$(cat "$KAFKA_TLS_DIR/.complete")" == "$TLS_LAYOUT" ]] && exit 0

command -v openssl >/dev/null || die "openssl not found; it is needed once to make the Kafka test CA"
KEYTOOL="${JAVA_HOME:+$JAVA_HOME/bin/}keytool"
command -v "$KEYTOOL" >/dev/null || die "keytool not found (it comes with the JDK that runs Kafka)"

log "Making the Kafka test CA and certificates in $KAFKA_TLS_DIR (one-time)..."
# Built beside the target and moved in whole, so a broker never reads half a set.
tmp="$KAFKA_TLS_DIR.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = streamgate
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[broker_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[client_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
EOF

ssl() { (cd "$tmp" && openssl "$@") >>"$tmp/openssl.log" 2>&1 || { cat "$tmp/openssl.log" >&2; die "openssl $1 failed"; }; }
# EC P-256: small, fast, and read by both Java 17 and Node.
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
days=3650

ssl req -x509 -config openssl.cnf -extensions ca_ext "${ec[@]}" -keyout ca.key -out ca.pem \
  -days "$days" -subj '/CN=streamgate local Kafka test CA'
leaf() { # NAME CN EXTENSIONS SERIAL
  ssl req -new -config openssl.cnf "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "/CN=$2"
  ssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -set_serial "$4" -days "$days" \
    -extfile openssl.cnf -extensions "$3" -out "$1.pem"
  rm -f "$tmp/$1.csr"
}
leaf broker localhost broker_ext 2
leaf client streamgate-client client_ext 3

# The broker's key store: its key, its certificate and the CA chain.
ssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker \
  -out broker.p12 -passout "pass:$KAFKA_STORE_PASSWORD"
# The trust store needs keytool: Java only trusts PKCS12 entries that carry
# its own "trusted certificate" attribute, which openssl does not write.
"$KEYTOOL" -importcert -noprompt -alias streamgate-ca -file "$tmp/ca.pem" -keystore "$tmp/truststore.p12" \
  -storetype PKCS12 -storepass "$KAFKA_STORE_PASSWORD" >>"$tmp/openssl.log" 2>&1 \
  || { cat "$tmp/openssl.log" >&2; die "keytool -importcert failed"; }

chmod 600 "$tmp"/*.key
rm -f "$tmp/openssl.log"
printf '%s\n' "$TLS_LAYOUT" >"$tmp/.complete"
rm -rf "$KAFKA_TLS_DIR"
mkdir -p "$(dirname "$KAFKA_TLS_DIR")"
mv "$tmp" "$KAFKA_TLS_DIR"
trap - EXIT
log "Kafka test CA ready: $KAFKA_TLS_DIR/ca.pem"
