package webui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
)

// CookieName is the name of the cookie that carries token after the first
// visit: "bgcmd_ui_" and a short hash of the token, so two views on one
// host (cookies do not tell ports apart) keep their own cookies. The hash
// says nothing usable about the token.
func CookieName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "bgcmd_ui_" + hex.EncodeToString(sum[:4])
}

// tokenParam is the query parameter of the first visit.
const tokenParam = "token"

// NewToken returns a fresh random token (32 bytes from crypto/rand, URL-safe
// base64).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// authorize reports whether r carries the token. A request with the right
// token in its query gets the cookie and a redirect to the same URL
// without the token (so it does not linger in the address bar or history);
// a request with the right cookie goes on; anything else gets 401 and no
// data. Comparisons take constant time.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	if q.Has(tokenParam) {
		if !s.tokenOK(q.Get(tokenParam)) {
			unauthorized(w)
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: string(s.token), Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del(tokenParam)
		// The same path, made local: "//host/x" would leave the view.
		u := url.URL{Path: "/" + strings.TrimLeft(r.URL.Path, "/\\"), RawQuery: q.Encode()}
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	if c, err := r.Cookie(s.cookie); err == nil && s.tokenOK(c.Value) {
		return true
	}
	unauthorized(w)
	return false
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), s.token) == 1
}

func unauthorized(w http.ResponseWriter) {
	http.Error(w, "bgcmd ui: this view needs its token: open the URL `bgcmd ui` printed (it ends in ?token=…)",
		http.StatusUnauthorized)
}
