package webui

import (
	"net/http"

	"github.com/bgcmd/bgcmd"
)

// refusalsShown is how many refusals the page lists, newest first.
const refusalsShown = 200

func (s *Server) handleRefusals(w http.ResponseWriter, r *http.Request) {
	refs, err := s.store.Refusals(r.Context(), refusalsShown)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "refusals", view{Title: "Refusals", Body: struct {
		Refusals []bgcmd.Refusal
		Max      int
	}{refs, refusalsShown}})
}
