// Package webui serves bgcmd's read-only web view: the job history with its
// filters and counters, one job's facts and transitions, its output paged by
// lines with grep and a live follow, the refusals, and two small charts.
//
// The view never writes: it reads a store opened read-only (SQLite itself
// refuses writes on it) and the logs and artifacts through the artifacts
// reader, and marks nothing as read. Pages are rendered on the server with
// html/template, so every byte of output, argv and labels is escaped; the
// stylesheet and the one small script are embedded and served by the view
// itself, under a strict Content-Security-Policy.
//
// Every request must carry the token the Server was made with: as the token
// query parameter on the first visit (the answer sets an HttpOnly,
// SameSite=Strict cookie and redirects to the same page without it), then
// as that cookie. The pages are served under the view's own path
// (ViewPath), and the cookie is scoped to it: browsers send a host's
// cookies to every port of it, and so, without that path, to any other
// server there. Anything else gets 401 and no data.
package webui
