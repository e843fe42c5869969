// Package github posts a Markdown comment to a GitHub issue through the
// GitHub REST API, using only the standard library. Failures come back as
// typed errors (errors.Is / errors.As) that say what to fix and never
// contain the token.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultBaseURL is the public GitHub API.
const DefaultBaseURL = "https://api.github.com"

// MaxBodyChars is GitHub's limit on a comment body, in characters.
const MaxBodyChars = 65536

var (
	ErrNoToken       = errors.New("no GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token that may comment on issues")
	ErrInvalidTarget = errors.New("invalid GitHub issue")
	ErrBodyTooLong   = errors.New("comment body too long")
	ErrUnauthorized  = errors.New("GitHub rejected the token")
	ErrNotFound      = errors.New("GitHub issue not found")
	ErrForbidden     = errors.New("GitHub refused the comment")
	ErrRateLimited   = errors.New("GitHub rate limit exceeded")
	ErrValidation    = errors.New("GitHub rejected the comment as invalid")
)

// Target is owner/repo#N.
type Target struct {
	Owner, Repo string
	Number      int
}

// ParseTarget parses "owner/repo#N", e.g. "haproxy/haproxy#3517".
func ParseTarget(s string) (Target, error) {
	bad := func(why string) (Target, error) {
		return Target{}, fmt.Errorf("%w %q: %s (want owner/repo#N, e.g. haproxy/haproxy#3517)", ErrInvalidTarget, s, why)
	}
	repo, num, ok := strings.Cut(s, "#")
	if !ok {
		return bad("missing '#'")
	}
	owner, name, ok := strings.Cut(repo, "/")
	switch {
	case !ok:
		return bad("missing '/' between owner and repo")
	case strings.Contains(name, "/"):
		return bad("too many '/'")
	case !validName(owner):
		return bad("bad or empty owner")
	case !validName(name):
		return bad("bad or empty repo")
	}
	// Digits only: Atoi alone would also take "+5" and "-5".
	n, err := strconv.Atoi(num)
	if strings.TrimLeft(num, "0123456789") != "" || err != nil || n <= 0 {
		return bad("issue number must be a positive integer")
	}
	return Target{owner, name, n}, nil
}

// validName accepts GitHub owner and repo names (letters, digits, '-', '_',
// '.'), refusing "." and ".." so a name cannot climb out of the API path.
func validName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
			return false
		}
	}
	return true
}

func (t Target) String() string { return fmt.Sprintf("%s/%s#%d", t.Owner, t.Repo, t.Number) }

// Client talks to the GitHub API. The zero value with a Token set works.
type Client struct {
	BaseURL string       // default DefaultBaseURL; tests point it at httptest
	Token   string       // sent as a Bearer token, never put in errors
	HTTP    *http.Client // default: one with a 30 s timeout
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// now is time.Now, replaceable by tests.
var now = time.Now

// FromEnv builds a Client from GITHUB_TOKEN (else GH_TOKEN) and, if set,
// HARP_GITHUB_API as the base URL. A missing token is ErrNoToken.
func FromEnv() (*Client, error) {
	tok := strings.TrimSpace(os.Getenv("GITHUB_TOKEN"))
	if tok == "" {
		tok = strings.TrimSpace(os.Getenv("GH_TOKEN"))
	}
	if tok == "" {
		return nil, ErrNoToken
	}
	base := os.Getenv("HARP_GITHUB_API")
	if base == "" {
		base = DefaultBaseURL
	}
	return &Client{BaseURL: base, Token: tok, HTTP: &http.Client{Timeout: 30 * time.Second}}, nil
}

// Comment posts body as a new comment on issue t and returns the comment's
// html_url. It does not retry: a *RateLimitError says when it may.
func (c *Client) Comment(ctx context.Context, t Target, body string) (string, error) {
	if c.Token == "" {
		return "", ErrNoToken
	}
	if n := utf8.RuneCountInString(body); n > MaxBodyChars {
		return "", fmt.Errorf("%w: %d characters, GitHub's limit is %d", ErrBodyTooLong, n, MaxBodyChars)
	}
	// A hand-built Target gets the same checks as a parsed one.
	if _, err := ParseTarget(t.String()); err != nil {
		return "", err
	}
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u := fmt.Sprintf("%s/repos/%s/%s/issues/%d/comments", strings.TrimRight(base, "/"), t.Owner, t.Repo, t.Number)
	host := u
	if pu, err := url.Parse(u); err == nil {
		host = pu.Host
	}
	payload, err := json.Marshal(map[string]string{"body": body})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return "", fmt.Errorf("GitHub API URL %q: %w", base, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "harp")
	req.Header.Set("Content-Type", "application/json")

	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("posting comment to %s via %s: %w", t, host, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("reading GitHub's answer from %s: %w", host, err)
	}
	var r response
	jsonErr := json.Unmarshal(raw, &r)
	// GitHub does not echo tokens, but a proxy or fake might: never let one through.
	r.Message = strings.ReplaceAll(r.Message, c.Token, "[token]")

	if resp.StatusCode/100 == 2 {
		if jsonErr != nil || r.HTMLURL == "" {
			return "", fmt.Errorf("GitHub answered %s for %s without a comment html_url", resp.Status, t)
		}
		return r.HTMLURL, nil
	}
	if rl := rateLimit(resp, r.Message); rl != nil {
		return "", rl
	}
	e := &APIError{Status: resp.StatusCode, Message: r.Message, Target: t}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		e.Err = ErrUnauthorized
	case http.StatusNotFound:
		e.Err = ErrNotFound
	case http.StatusForbidden:
		e.Err = ErrForbidden
	case http.StatusUnprocessableEntity:
		e.Err = ErrValidation
		for _, d := range r.Errors {
			if s := d.String(); s != "" {
				e.Details = append(e.Details, strings.ReplaceAll(s, c.Token, "[token]"))
			}
		}
	}
	return "", e
}

// response is the part of GitHub's JSON answers we use.
type response struct {
	HTMLURL string       `json:"html_url"`
	Message string       `json:"message"`
	Errors  []fieldError `json:"errors"`
}

// fieldError is one entry of a 422's "errors" list.
type fieldError struct {
	Resource string `json:"resource"`
	Field    string `json:"field"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

func (d fieldError) String() string {
	if d.Message != "" {
		return d.Message
	}
	return strings.TrimSpace(strings.Join([]string{d.Field, d.Code}, " "))
}

// APIError is a non-2xx answer other than a rate limit. Err is the
// sentinel for the status (ErrUnauthorized, ErrNotFound, ErrForbidden,
// ErrValidation) or nil for other statuses.
type APIError struct {
	Status  int
	Message string   // GitHub's "message" field, if any
	Details []string // 422 only: GitHub's per-field errors
	Target  Target
	Err     error
}

func (e *APIError) Unwrap() error { return e.Err }

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	switch e.Err {
	case ErrUnauthorized:
		return fmt.Sprintf("GitHub rejected the token (%d %s): check GITHUB_TOKEN", e.Status, msg)
	case ErrNotFound:
		return fmt.Sprintf("GitHub issue %s not found, or the token cannot see it (GitHub answers 404 for private repositories the token cannot read)", e.Target)
	case ErrForbidden:
		return fmt.Sprintf("GitHub refused to let the token comment on %s (%d %s): the token lacks permission to comment on issues", e.Target, e.Status, msg)
	case ErrValidation:
		s := fmt.Sprintf("GitHub rejected the comment on %s as invalid (%d %s)", e.Target, e.Status, msg)
		if len(e.Details) > 0 {
			s += ": " + strings.Join(e.Details, "; ")
		}
		return s
	}
	return fmt.Sprintf("GitHub answered %d %s for %s: %s", e.Status, http.StatusText(e.Status), e.Target, msg)
}

// RateLimitError says GitHub refused for rate limiting, and when to retry.
// errors.Is(err, ErrRateLimited) is true for it.
type RateLimitError struct {
	RetryAt time.Time     // when GitHub allows the next request
	Wait    time.Duration // RetryAt less the time the answer came
	Message string        // GitHub's "message" field, if any
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("GitHub rate limit exceeded; retry after %s (in %s)",
		e.RetryAt.UTC().Format(time.RFC3339), e.Wait.Round(time.Second))
}

func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// rateLimit recognises GitHub's rate-limit answers (see "Rate limits for the
// REST API"): Retry-After wins (secondary limit), then an exhausted primary
// limit's X-RateLimit-Reset; without either GitHub says to wait a minute.
func rateLimit(resp *http.Response, msg string) *RateLimitError {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return nil
	}
	h := resp.Header
	retryAfter, errRA := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	exhausted := strings.TrimSpace(h.Get("X-RateLimit-Remaining")) == "0"
	if resp.StatusCode == http.StatusForbidden && errRA != nil && !exhausted &&
		!strings.Contains(strings.ToLower(msg), "rate limit") {
		return nil // a plain permission refusal
	}
	t := now()
	at := t.Add(time.Minute)
	if errRA == nil && retryAfter >= 0 {
		at = t.Add(time.Duration(retryAfter) * time.Second)
	} else if reset, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64); exhausted && err == nil {
		at = time.Unix(reset, 0)
	}
	return &RateLimitError{RetryAt: at, Wait: max(at.Sub(t), 0), Message: msg}
}
