package webui

import "net/http"

// contentSecurityPolicy allows only the view's own stylesheet, script and
// event stream: no inline script or style, no framing, forms only to the
// view itself.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; script-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// setSecurityHeaders sets the headers every answer carries, 401s included.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}
