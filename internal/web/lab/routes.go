package lab

import (
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/hosteval/hosteval/internal/web"
)

// assets are the lab's page template, scripts and stylesheet.
//
//go:embed assets
var assets embed.FS

// AssetsPrefix is where the lab's own scripts and stylesheet are served.
const AssetsPrefix = "/lab/"

// maxBody bounds a request's body: a question, a call's arguments, an
// answer.
const maxBody = 1 << 20

func (l *Lab) routes() http.Handler {
	tmpl := template.Must(web.Templates(assets, "assets/lab.html"))
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+web.StaticPrefix, web.Static())
	mux.Handle("GET "+AssetsPrefix, http.StripPrefix(AssetsPrefix, http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		title := l.opts.Title
		if title == "" {
			title = "lab"
		}
		if err := tmpl.ExecuteTemplate(w, "frame.html", map[string]any{"Title": title, "Manual": l.conv == nil}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, l.state.snapshot())
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		// A page that follows the events is a page the person may answer
		// from: while none is open, questions are answered no.
		l.pages.open()
		defer l.pages.close()
		l.state.events.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /calls/{id}", func(w http.ResponseWriter, r *http.Request) {
		d, ok := l.state.detail(r.PathValue("id"))
		if !ok {
			web.WriteJSON(w, http.StatusNotFound, map[string]string{"error": "there is no such call"})
			return
		}
		web.WriteJSON(w, http.StatusOK, d)
	})
	mux.HandleFunc("POST /ask", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Question string `json:"question"`
		}
		if !decode(w, r, &req) {
			return
		}
		if strings.TrimSpace(req.Question) == "" {
			web.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "type a question first"})
			return
		}
		reply(w, l.ask(strings.TrimSpace(req.Question)))
	})
	mux.HandleFunc("POST /call", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}
		if !decode(w, r, &req) {
			return
		}
		if strings.TrimSpace(req.Name) == "" {
			web.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "choose a tool first"})
			return
		}
		reply(w, l.call(strings.TrimSpace(req.Name), req.Arguments))
	})
	mux.HandleFunc("POST /answer", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID      string         `json:"id"`
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		}
		if !decode(w, r, &req) {
			return
		}
		if err := l.state.answer(req.ID, req.Action, req.Content); err != nil {
			var ae *answerError
			if errors.As(err, &ae) {
				web.WriteJSON(w, ae.Status, ae)
				return
			}
			web.WriteJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		web.WriteJSON(w, http.StatusOK, map[string]string{"ok": "sent"})
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, r *http.Request) {
		if !decode(w, r, &struct{}{}) {
			return
		}
		l.stop()
		web.WriteJSON(w, http.StatusOK, map[string]string{"ok": "stopped"})
	})
	// web.Serve guards it (web.Guard): no other site drives the lab.
	return mux
}

// reply answers a request that starts something: 202, or 409 while
// something runs, or 400.
func reply(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
		web.WriteJSON(w, http.StatusAccepted, map[string]string{"ok": "started"})
	case errors.Is(err, errBusy):
		web.WriteJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
	default:
		web.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
	}
}

// decode reads a JSON request body into v, numbers as json.Number so that
// an answer's integers stay integers. It answers 400 itself on failure.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		web.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "the request is not the JSON this page sends: " + err.Error()})
		return false
	}
	return true
}
