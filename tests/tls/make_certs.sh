#!/bin/sh
# make_certs.sh DIR - the test PKI, made fresh at test time (no key is committed): a CA, and
# server certificates it signs for the loopback names (localhost, 127.0.0.1, ::1), with an
# EC P-256 key (server.pem/server.key) and an RSA 2048 key (server-rsa.pem/server-rsa.key),
# and one signed by another CA (untrusted.pem/.key).
# The clients trust ca.pem (NODE_EXTRA_CA_CERTS).
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
rm -f ./*.pem ./*.key ./*.csr ./*.srl ./*.cnf
cat > ext.cnf <<'EXT'
subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
EXT
ca() {  # ca NAME
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.pem" \
    -days 3 -subj "/CN=emcp test $1" 2>/dev/null
}
leaf() {  # leaf NAME CA -newkey ARGS...
  name=$1 signer=$2
  shift 2
  openssl req "$@" -nodes -keyout "$name.key" -out "$name.csr" -subj "/CN=localhost" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA "$signer.pem" -CAkey "$signer.key" -CAcreateserial -out "$name.pem" \
    -days 3 -extfile ext.cnf 2>/dev/null
}
ca ca
ca other-ca
leaf server ca -newkey ec -pkeyopt ec_paramgen_curve:P-256
leaf server-rsa ca -newkey rsa:2048
leaf untrusted other-ca -newkey ec -pkeyopt ec_paramgen_curve:P-256
rm -f ./*.csr ./*.srl
openssl verify -CAfile ca.pem server.pem server-rsa.pem >/dev/null
echo "test PKI in $dir"
