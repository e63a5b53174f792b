#!/bin/sh
# Seeds for fuzz_jwt: JWTs made at build time with openssl (no token is kept in the repository),
# HS256-signed with the secret fuzz_jwt.cpp's real key uses, so that the fuzzer starts from
# tokens that pass, and from each kind of refusal.
# Usage: make_jwt_seeds.sh OUT_DIR
set -eu
out=$1
rm -rf "$out"
mkdir -p "$out"
# fuzz_jwt.cpp's kSecret, "emcp-fuzz-hs256-secret-0123456789abcdef", in hex.
key=$(printf '%s' 'emcp-fuzz-hs256-secret-0123456789abcdef' | od -An -v -tx1 | tr -d ' \n')
iss='https://as.example.com'
aud='https://device.example.com/mcp'
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
# seed NAME HEADER CLAIMS: header.claims.HMAC-SHA256
seed() {
  input="$(printf '%s' "$2" | b64url).$(printf '%s' "$3" | b64url)"
  sig=$(printf '%s' "$input" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -binary | b64url)
  printf '%s.%s' "$input" "$sig" > "$out/$1"
  # The same as JSON texts: fuzz_jwt encodes "HEADER<newline>CLAIMS" into a token itself.
  printf '%s\n%s' "$2" "$3" > "$out/$1.json"
}
hs='{"alg":"HS256","typ":"JWT"}'
seed good "$hs" "{\"iss\":\"$iss\",\"aud\":\"$aud\",\"exp\":1700003600,\"sub\":\"alice\",\"scope\":\"sensors:read relay:write\",\"client_id\":\"c1\"}"
seed aud_array "$hs" "{\"iss\":\"$iss\",\"aud\":[\"https://other.example\",\"$aud\"],\"exp\":1700003600,\"iat\":1699990000,\"nbf\":1699990000}"
seed escapes "$hs" "{\"iss\":\"https:\\/\\/as.example.com\",\"aud\":\"$aud\",\"exp\":1.7000036e9,\"sub\":\"a\\u00e9\\ud83d\\ude00\"}"
seed nested "{\"alg\":\"HS256\",\"kid\":\"k\",\"jwk\":{\"kty\":\"oct\"}}" "{\"iss\":\"$iss\",\"aud\":\"$aud\",\"exp\":1700003600,\"cnf\":{\"jkt\":\"x\",\"a\":[1,2.5,true,null]}}"
seed expired "$hs" "{\"iss\":\"$iss\",\"aud\":\"$aud\",\"exp\":1699990000}"
seed not_yet "$hs" "{\"iss\":\"$iss\",\"aud\":\"$aud\",\"exp\":1700003600,\"nbf\":1700001000}"
seed wrong_aud "$hs" "{\"iss\":\"$iss\",\"aud\":\"https://other.example\",\"exp\":1700003600}"
seed duplicate "$hs" "{\"iss\":\"$iss\",\"aud\":\"$aud\",\"exp\":1700003600,\"exp\":1800000000}"
seed exp_string "$hs" "{\"iss\":\"$iss\",\"aud\":\"$aud\",\"exp\":\"1700003600\"}"
seed crit '{"alg":"HS256","crit":["b64"],"b64":false}' "{\"iss\":\"$iss\",\"aud\":\"$aud\",\"exp\":1700003600}"
printf '%s.%s.' "$(printf '{"alg":"none"}' | b64url)" "$(printf '{"iss":"%s","aud":"%s","exp":1700003600}' "$iss" "$aud" | b64url)" > "$out/alg_none"
echo "jwt seeds: $(ls "$out" | wc -l) files in $out"
