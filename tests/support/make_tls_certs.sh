#!/usr/bin/env bash
# make_tls_certs.sh DIR: the certificates of the TLS tests, made at run time (nothing secret
# is kept in the repository). EC P-256 keys (fast to make), valid for two days:
#   ca.crt/ca.key          the test CA
#   server.crt/server.key  signed by ca, for 127.0.0.1 and localhost (serverAuth)
#   server-enc.key         server.key encrypted with the pass phrase "secret"
#   client.crt/client.key  signed by ca (clientAuth)
#   ca2.crt, server2.*     another CA and a server certificate it signed: the wrong-CA case
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"

new_ca() {  # name common-name
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$1.key" -out "$1.crt" -days 2 -subj "/CN=$2" 2>/dev/null
}
new_leaf() {  # name ca common-name extensions
  openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$1.key" -out "$1.csr" -subj "/CN=$3" 2>/dev/null
  printf '%b\n' "$4" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial \
    -out "$1.crt" -days 2 -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

server_ext='subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
new_ca ca "latch test CA"
new_ca ca2 "latch other CA"
new_leaf server ca localhost "$server_ext"
new_leaf client ca "latch test client" 'extendedKeyUsage=clientAuth'
new_leaf server2 ca2 localhost "$server_ext"
openssl pkey -in server.key -out server-enc.key -aes256 -passout pass:secret
