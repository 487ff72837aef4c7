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

// ViewPath is the path under which the view for token serves every page,
// "/v/" and a hash of the token: the token's cookie is scoped to it.
// Cookies do not tell the ports of a host apart, so a cookie for the
// whole host would go with every request the browser makes to any other
// port of it, such as a job's dev server; scoped to this path, it goes
// only where that path is asked for, which nothing else on the host knows
// to ask. Like CookieName, it says nothing usable about the token.
func ViewPath(token string) string {
	sum := sha256.Sum256([]byte("bgcmd ui view path\x00" + token))
	return "/v/" + hex.EncodeToString(sum[:16])
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

// authorize reports whether r, asking for inner (its path within the
// view), carries the token. A request with the right token in its query,
// at the view's path or at the host's root (the URL `bgcmd ui` prints),
// gets the cookie, scoped to the view's path, and a redirect to the same
// page there without the token (so it does not linger in the address bar
// or history); a request at the view's path with the right cookie goes
// on; anything else gets 401 and no data. Comparisons take constant time.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, inner string, inView bool) bool {
	q := r.URL.Query()
	if q.Has(tokenParam) {
		if !s.tokenOK(q.Get(tokenParam)) {
			unauthorized(w)
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: string(s.token), Path: s.prefix + "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del(tokenParam)
		// The same page, in the view: "//host/x" would leave it.
		u := url.URL{Path: s.prefix + "/" + strings.TrimLeft(inner, "/\\"), RawQuery: q.Encode()}
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	if c, err := r.Cookie(s.cookie); inView && err == nil && s.tokenOK(c.Value) {
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
