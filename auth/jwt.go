package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// signingAlg returns the JWS algorithm for key.
func signingAlg(key crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return jose.RS256, nil
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
	case ed25519.PrivateKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("auth: unsupported private key type %T (want *rsa.PrivateKey, *ecdsa.PrivateKey or ed25519.PrivateKey)", key)
}

// signJWT signs claims as a compact JWS with header typ. With embedJWK the
// public key goes in the jwk header (DPoP); kid, when set, goes in kid.
func signJWT(key crypto.Signer, kid, typ string, embedJWK bool, claims map[string]any) (string, error) {
	alg, err := signingAlg(key)
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{EmbedJWK: embedJWK}).WithType(jose.ContentType(typ))
	sk := jose.SigningKey{Algorithm: alg, Key: key}
	if kid != "" && !embedJWK {
		sk.Key = jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: string(alg)}
	}
	signer, err := jose.NewSigner(sk, opts)
	if err != nil {
		return "", fmt.Errorf("auth: building JWT signer: %v", err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("auth: signing JWT: %v", err)
	}
	return obj.CompactSerialize()
}

// newJTI returns a random JWT ID.
func newJTI() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// clientAssertionType is the client_assertion_type of private_key_jwt.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// clientAssertionLifetime is the validity of a client assertion.
const clientAssertionLifetime = 5 * time.Minute

// clientAssertion builds a private_key_jwt client assertion (RFC 7523
// §2.2 and §3): iss and sub are the client id, aud is the authorization
// server's issuer identifier.
func clientAssertion(key crypto.Signer, kid, clientID, audience string, now time.Time) (string, error) {
	return signJWT(key, kid, "JWT", false, map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(clientAssertionLifetime).Unix(),
		"jti": newJTI(),
	})
}
