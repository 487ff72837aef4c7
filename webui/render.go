package webui

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// pageNames are the page templates; each is parsed with layout.html.
var pageNames = []string{"jobs", "job", "output", "refusals", "charts", "error"}

// pages holds one parsed template set per page.
type pages struct {
	sets map[string]*template.Template
}

// loadPages parses the pages of a view served under prefix (ViewPath):
// the templates' links start with {{at}}, which is prefix.
func loadPages(prefix string) (*pages, error) {
	p := &pages{sets: map[string]*template.Template{}}
	at := template.FuncMap{"at": func() string { return prefix }}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).Funcs(at).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web view: parse template %s: %w", name, err)
		}
		p.sets[name] = t
	}
	return p, nil
}

// view is what the layout needs around a page's own data.
type view struct {
	Title string
	// Script is an embedded script the page loads ("" for none).
	Script string
	Body   any
}

// render executes a page into a buffer first, so a template error becomes
// an error page rather than half a page.
func (s *Server) render(w http.ResponseWriter, code int, name string, v view) {
	var b bytes.Buffer
	if err := s.pages.sets[name].ExecuteTemplate(&b, "layout", v); err != nil {
		http.Error(w, "bgcmd ui: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// httpError is an error with the status it answers and a message that
// says what was wrong and how to recover.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// fail renders err as an error page: its own status for an httpError,
// 500 otherwise.
func (s *Server) fail(w http.ResponseWriter, err error) {
	code, msg := http.StatusInternalServerError, err.Error()
	var he *httpError
	if errors.As(err, &he) {
		code = he.code
	}
	s.render(w, code, "error", view{Title: http.StatusText(code), Body: struct {
		Code    int
		Status  string
		Message string
	}{code, http.StatusText(code), msg}})
}

// staticHandler serves the embedded stylesheet and script.
func staticHandler() http.Handler {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	return http.FileServerFS(sub)
}
