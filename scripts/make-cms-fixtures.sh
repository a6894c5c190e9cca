#!/usr/bin/env bash
# Generate CMS signature fixtures with OpenSSL (an independent implementation) into directory $1.
# Every fixture that should verify is checked with `openssl cms -verify` here, so the vectors are
# known-good. GOST fixtures need the gost engine (packages in scripts/ci-apt-packages.txt); without
# it they are skipped and the file NO_GOST is written.
set -euo pipefail
OUT=${1:?usage: make-cms-fixtures.sh <output-dir>}
mkdir -p "$OUT"
cd "$OUT"
unset OPENSSL_CONF
export LC_ALL=C

q() { "$@" >/dev/null 2>&1 || { echo "FAILED: $*" >&2; "$@"; exit 1; }; }

printf 'Hello CMS fixture: signed content for the public-services gateway.\n' > data.txt
printf 'Hello CMS fixture: TAMPERED content for the public-services gateway.\n' > other.txt

cat > ca.ext <<'X'
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
X
cat > leaf.ext <<'X'
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
X

# --- keys ---------------------------------------------------------------------------------------
q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out root.key
q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out inter.key
q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key
q openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec256.key
q openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out ec384.key

# --- trusted chain: root -> intermediate -> leaves ------------------------------------------------
q openssl req -x509 -new -key root.key -sha256 -days 3650 -subj '/C=RU/O=Gateway Test/CN=Test Root CA' \
  -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' -out root.pem
q openssl req -new -key inter.key -subj '/C=RU/O=Gateway Test/CN=Test Intermediate CA' -out inter.csr
q openssl x509 -req -in inter.csr -CA root.pem -CAkey root.key -set_serial 0x1001 -days 3000 -sha256 \
  -extfile ca.ext -out inter.pem
leaf() { # name key subject [issuer-cert issuer-key]
  q openssl req -new -key "$2" -subj "$3" -out "$1.csr"
  q openssl x509 -req -in "$1.csr" -CA "${4:-inter.pem}" -CAkey "${5:-inter.key}" -set_serial "0x$(openssl rand -hex 8)" \
    -days 2000 -sha256 -extfile leaf.ext -out "$1.pem"
}
leaf rsa rsa.key '/C=RU/O=Gateway Test/CN=RSA Signer/emailAddress=rsa@example.test'
leaf ec256 ec256.key '/C=RU/O=Gateway Test/CN=ECDSA P-256 Signer'
leaf ec384 ec384.key '/C=RU/O=Gateway Test/CN=ECDSA P-384 Signer'

sign() { # out signer key extra-args...
  local out=$1 cert=$2 key=$3; shift 3
  q openssl cms -sign -binary -in data.txt -signer "$cert" -inkey "$key" -certfile inter.pem -outform DER -out "$out" "$@"
}
verify() { # file [content]
  if [ $# -eq 2 ]; then
    q openssl cms -verify -binary -inform DER -in "$1" -content "$2" -CAfile root.pem -purpose any -out /dev/null
  else
    q openssl cms -verify -binary -inform DER -in "$1" -CAfile root.pem -purpose any -out /dev/null
  fi
}

sign rsa-attached.p7s rsa.pem rsa.key -nodetach -md sha256;  verify rsa-attached.p7s
sign rsa-detached.p7s rsa.pem rsa.key -md sha256;            verify rsa-detached.p7s data.txt
sign rsa-sha512.p7s rsa.pem rsa.key -nodetach -md sha512;    verify rsa-sha512.p7s
sign rsa-pss.p7s rsa.pem rsa.key -nodetach -md sha256 -keyopt rsa_padding_mode:pss; verify rsa-pss.p7s
sign rsa-noattr.p7s rsa.pem rsa.key -nodetach -md sha256 -noattr; verify rsa-noattr.p7s
sign ec256-attached.p7s ec256.pem ec256.key -nodetach -md sha256; verify ec256-attached.p7s
sign ec256-detached.p7s ec256.pem ec256.key -md sha256;           verify ec256-detached.p7s data.txt
sign ec384-attached.p7s ec384.pem ec384.key -nodetach -md sha384; verify ec384-attached.p7s
sign ec256-noattr-detached.p7s ec256.pem ec256.key -md sha256 -noattr; verify ec256-noattr-detached.p7s data.txt

sign rsa-keyid.p7s rsa.pem rsa.key -nodetach -md sha256 -keyid; verify rsa-keyid.p7s
# SHA-224: a digest WebCrypto does not offer
sign rsa-sha224.p7s rsa.pem rsa.key -nodetach -md sha224;    verify rsa-sha224.p7s
# ECDSA on secp256k1: a curve WebCrypto does not offer
q openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:secp256k1 -out k1.key
leaf k1 k1.key '/C=RU/O=Gateway Test/CN=ECDSA secp256k1 Signer'
sign k1-attached.p7s k1.pem k1.key -nodetach -md sha256; verify k1-attached.p7s
# other CMS content types and a certs-only SignedData without signers
q openssl cms -data_create -binary -in data.txt -outform DER -out data-content.p7
q openssl cms -digest_create -binary -in data.txt -outform DER -out digested-content.p7
q openssl crl2pkcs7 -nocrl -certfile rsa.pem -outform DER -out certs-only.p7

# two signers on one attached message
q openssl cms -sign -binary -nodetach -in data.txt -signer rsa.pem -inkey rsa.key -signer ec256.pem -inkey ec256.key \
  -certfile inter.pem -md sha256 -outform DER -out two-signers.p7s
verify two-signers.p7s

# signer certificate left out of the message (-nocerts): verifier must report the missing cert
sign nocerts.p7s rsa.pem rsa.key -nodetach -md sha256 -nocerts

# tampered content: one byte of the encapsulated content changed (signed attributes intact)
perl -0777 -pe 's/Hello CMS fixture/Jello CMS fixture/' rsa-attached.p7s > tampered-content.p7s
perl -0777 -pe 's/Hello CMS fixture/Jello CMS fixture/' rsa-noattr.p7s > tampered-content-noattr.p7s
# tampered signed attribute: last digit of the signing-time UTCTime (the last UTCTime in the file)
perl -0777 -pe 's/^(.*\x17\x0d\d{11})(\d)Z/$1.(($2+1)%10)."Z"/se' rsa-attached.p7s > tampered-attr.p7s
cmp -s rsa-attached.p7s tampered-attr.p7s && { echo 'tampering the signing time failed' >&2; exit 1; }

# nested CMS: a SignedData whose encapsulated content is itself a SignedData
q openssl cms -sign -binary -nodetach -in rsa-attached.p7s -signer rsa.pem -inkey rsa.key -certfile inter.pem \
  -md sha256 -econtent_type 1.2.840.113549.1.7.2 -outform DER -out nested.p7s

# expired leaf (validity 2020-2021), issued with `openssl ca` because OpenSSL 3.0 x509 has no -not_after
mkdir -p ca-db && : > ca-db/index.txt && echo 2001 > ca-db/serial
cat > ca.cnf <<X
[ca]
default_ca = CA_default
[CA_default]
dir = $OUT/ca-db
database = \$dir/index.txt
new_certs_dir = \$dir
serial = \$dir/serial
default_md = sha256
policy = policy_any
unique_subject = no
x509_extensions = leaf_ext
[policy_any]
commonName = supplied
organizationName = optional
countryName = optional
[leaf_ext]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, nonRepudiation
X
q openssl req -new -key rsa.key -subj '/C=RU/O=Gateway Test/CN=Expired Signer' -out expired.csr
q openssl ca -batch -config ca.cnf -cert inter.pem -keyfile inter.key -in expired.csr -out expired.pem \
  -startdate 20200101000000Z -enddate 20210101000000Z -notext
sign expired.p7s expired.pem rsa.key -nodetach -md sha256
q openssl cms -verify -binary -inform DER -in expired.p7s -CAfile root.pem -purpose any -no_check_time -out /dev/null

# untrusted root: same kind of chain under a root the verifier does not trust
q openssl req -x509 -new -key inter.key -sha256 -days 3650 -subj '/C=RU/O=Elsewhere/CN=Untrusted Root CA' \
  -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' -out untrusted-root.pem
leaf untrusted-leaf rsa.key '/C=RU/O=Elsewhere/CN=Signer Under Untrusted Root' untrusted-root.pem inter.key
q openssl cms -sign -binary -nodetach -in data.txt -signer untrusted-leaf.pem -inkey rsa.key -certfile untrusted-root.pem \
  -md sha256 -outform DER -out untrusted.p7s
q openssl cms -verify -binary -inform DER -in untrusted.p7s -CAfile untrusted-root.pem -purpose any -out /dev/null

# broken chain: the leaf is issued by an end-entity certificate (no CA basic constraint)
leaf notca rsa.key '/C=RU/O=Gateway Test/CN=Not A CA'
leaf notca-leaf ec256.key '/C=RU/O=Gateway Test/CN=Issued By Non-CA' notca.pem rsa.key
cat notca.pem inter.pem > notca-chain.pem
q openssl cms -sign -binary -nodetach -in data.txt -signer notca-leaf.pem -inkey ec256.key -certfile notca-chain.pem \
  -md sha256 -outform DER -out notca.p7s

for f in root inter; do q openssl x509 -in $f.pem -outform DER -out $f.der; done
q openssl x509 -in untrusted-root.pem -outform DER -out untrusted-root.der

# --- GOST ---------------------------------------------------------------------------------------
GOST_SO=$(dpkg -L libengine-gost-openssl 2>/dev/null | grep '/engines-3/gost.so$' | head -1 || true)
if [ -z "$GOST_SO" ] || [ ! -f "$GOST_SO" ]; then
  echo 'gost engine not installed (see scripts/ci-apt-packages.txt)' > NO_GOST
  exit 0
fi
cat > gost.cnf <<X
openssl_conf = openssl_def
[openssl_def]
engines = engine_section
[engine_section]
gost = gost_section
[gost_section]
engine_id = gost
dynamic_path = $GOST_SO
default_algorithms = ALL
X
export OPENSSL_CONF=$OUT/gost.cnf
gkey() { q openssl genpkey -algorithm "$1" -pkeyopt "paramset:$2" -out "$3"; }
gkey gost2012_512 A gost-root.key
q openssl req -x509 -new -key gost-root.key -md_gost12_512 -days 3650 -subj '/C=RU/O=Gateway Test/CN=GOST Root CA' \
  -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' -out gost-root.pem
q openssl x509 -in gost-root.pem -outform DER -out gost-root.der
gsign() { # name algorithm paramset md
  local name=$1
  gkey "$2" "$3" "$name.key"
  q openssl req -new -key "$name.key" -subj "/C=RU/O=Gateway Test/CN=GOST $name" -out "$name.csr"
  q openssl x509 -req -in "$name.csr" -CA gost-root.pem -CAkey gost-root.key -set_serial "0x$(openssl rand -hex 8)" \
    -days 2000 -md_gost12_512 -extfile leaf.ext -out "$name.pem"
  q openssl cms -sign -binary -nodetach -in data.txt -signer "$name.pem" -inkey "$name.key" -md "$4" -outform DER -out "$name-attached.p7s"
  q openssl cms -sign -binary -in data.txt -signer "$name.pem" -inkey "$name.key" -md "$4" -outform DER -out "$name-detached.p7s"
  q openssl cms -verify -binary -inform DER -in "$name-attached.p7s" -CAfile gost-root.pem -purpose any -out /dev/null
  q openssl cms -verify -binary -inform DER -in "$name-detached.p7s" -content data.txt -CAfile gost-root.pem -purpose any -out /dev/null
}
gsign gost256-A gost2012_256 A md_gost12_256
gsign gost256-TCA gost2012_256 TCA md_gost12_256
gsign gost512-A gost2012_512 A md_gost12_512
gsign gost512-C gost2012_512 C md_gost12_512
# GOST R 34.10-2001 with GOST R 34.11-94, self-signed (certificate signature 1.2.643.2.2.3)
if openssl genpkey -algorithm gost2001 -pkeyopt paramset:A -out gost2001.key >/dev/null 2>&1; then
  q openssl req -x509 -new -key gost2001.key -md_gost94 -days 3650 -subj '/C=RU/O=Gateway Test/CN=GOST 2001 Signer' -out gost2001.pem
  q openssl x509 -in gost2001.pem -outform DER -out gost2001.der
  q openssl cms -sign -binary -nodetach -in data.txt -signer gost2001.pem -inkey gost2001.key -md md_gost94 -outform DER -out gost2001-attached.p7s
  q openssl cms -verify -binary -inform DER -in gost2001-attached.p7s -CAfile gost2001.pem -purpose any -out /dev/null
fi
# tampered GOST content
perl -0777 -pe 's/Hello CMS fixture/Jello CMS fixture/' gost256-A-attached.p7s > gost256-A-tampered.p7s
echo done > OK
