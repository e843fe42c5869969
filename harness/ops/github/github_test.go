package github

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testToken = "ghp_SECRETtoken1234567890"

var issue = Target{"haproxy", "haproxy", 3517}

// fakeAPI serves handler as a local GitHub API and counts the requests it gets.
func fakeAPI(t *testing.T, handler http.HandlerFunc) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}, &n
}

// answer replies with status, headers (name, value pairs) and a JSON body.
func answer(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

// fixNow pins the package clock so rate-limit waits are exact.
func fixNow(t *testing.T, at time.Time) {
	t.Helper()
	old := now
	now = func() time.Time { return at }
	t.Cleanup(func() { now = old })
}

// commentErr posts through a fake answering h and returns the error, which
// must not be nil nor contain the token.
func commentErr(t *testing.T, h http.HandlerFunc) error {
	t.Helper()
	c, _ := fakeAPI(t, h)
	u, err := c.Comment(context.Background(), issue, "hello")
	if err == nil {
		t.Fatalf("Comment succeeded (%q), want an error", u)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("error contains the token: %v", err)
	}
	return err
}

func TestCommentSuccess(t *testing.T) {
	const body = "## harp\n\n**REPRODUCED** on `3.3-dev5` — see <details>…</details>"
	const want = "https://github.com/haproxy/haproxy/issues/3517#issuecomment-1"
	c, n := fakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			t.Errorf("method = %s, want POST", r.Method)
		}
		if r.URL.Path != "/repos/haproxy/haproxy/issues/3517/comments" {
			t.Errorf("path = %s", r.URL.Path)
		}
		for k, v := range map[string]string{
			"Authorization":        "Bearer " + testToken,
			"Accept":               "application/vnd.github+json",
			"X-GitHub-Api-Version": "2022-11-28",
			"User-Agent":           "harp",
			"Content-Type":         "application/json",
		} {
			if got := r.Header.Get(k); got != v {
				t.Errorf("header %s = %q, want %q", k, got, v)
			}
		}
		var got map[string]string
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decoding request body: %v", err)
		}
		if len(got) != 1 || got["body"] != body {
			t.Errorf("request body = %q, want {\"body\": %q}", got, body)
		}
		answer(http.StatusCreated, `{"id":1,"html_url":"`+want+`"}`)(w, r)
	})
	u, err := c.Comment(context.Background(), issue, body)
	if err != nil {
		t.Fatal(err)
	}
	if u != want {
		t.Errorf("html_url = %q, want %q", u, want)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
}

func TestMissingToken(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_TOKEN", "")
	if c, err := FromEnv(); !errors.Is(err, ErrNoToken) {
		t.Fatalf("FromEnv() = %v, %v; want ErrNoToken", c, err)
	}
	if !strings.Contains(ErrNoToken.Error(), "GITHUB_TOKEN") || !strings.Contains(ErrNoToken.Error(), "GH_TOKEN") {
		t.Errorf("ErrNoToken does not say what to set: %q", ErrNoToken)
	}

	c, n := fakeAPI(t, answer(http.StatusCreated, `{"html_url":"x"}`))
	c.Token = ""
	if _, err := c.Comment(context.Background(), issue, "hello"); !errors.Is(err, ErrNoToken) {
		t.Errorf("Comment with empty token: %v, want ErrNoToken", err)
	}
	if n.Load() != 0 {
		t.Errorf("%d requests reached the server, want 0", n.Load())
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_TOKEN", "gh-token")
	t.Setenv("HARP_GITHUB_API", "")
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Token != "gh-token" || c.BaseURL != DefaultBaseURL || c.HTTP == nil || c.HTTP.Timeout != 30*time.Second {
		t.Errorf("FromEnv() = %+v, want GH_TOKEN, default base URL, 30 s timeout", c)
	}

	t.Setenv("GITHUB_TOKEN", "github-token")
	t.Setenv("HARP_GITHUB_API", "http://127.0.0.1:1/api")
	if c, err = FromEnv(); err != nil {
		t.Fatal(err)
	}
	if c.Token != "github-token" || c.BaseURL != "http://127.0.0.1:1/api" {
		t.Errorf("FromEnv() = %+v, want GITHUB_TOKEN first and HARP_GITHUB_API", c)
	}

	// The base URL from the environment is the one Comment uses.
	fake, _ := fakeAPI(t, answer(http.StatusCreated, `{"html_url":"https://example/1"}`))
	t.Setenv("HARP_GITHUB_API", fake.BaseURL+"/")
	if c, err = FromEnv(); err != nil {
		t.Fatal(err)
	}
	if u, err := c.Comment(context.Background(), issue, "hi"); err != nil || u != "https://example/1" {
		t.Errorf("Comment via HARP_GITHUB_API = %q, %v", u, err)
	}
}

func TestUnauthorized(t *testing.T) {
	err := commentErr(t, answer(http.StatusUnauthorized, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`))
	if !errors.Is(err, ErrUnauthorized) {
		t.Errorf("error %v is not ErrUnauthorized", err)
	}
	if want := "GitHub rejected the token (401 Bad credentials): check GITHUB_TOKEN"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestNotFound(t *testing.T) {
	err := commentErr(t, answer(http.StatusNotFound, `{"message":"Not Found"}`))
	var ae *APIError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &ae) || ae.Status != 404 {
		t.Errorf("error %v is not an APIError 404 / ErrNotFound", err)
	}
	if s := err.Error(); !strings.Contains(s, "haproxy/haproxy#3517") || !strings.Contains(s, "cannot see it") {
		t.Errorf("error %q does not name the issue or the visibility cause", s)
	}
}

func TestPrimaryRateLimit(t *testing.T) {
	at := time.Date(2026, 11, 29, 19, 0, 50, 0, time.UTC)
	reset := time.Date(2026, 11, 29, 19, 5, 0, 0, time.UTC)
	fixNow(t, at)
	err := commentErr(t, answer(http.StatusForbidden, `{"message":"API rate limit exceeded for user ID 1."}`,
		"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10)))
	var rl *RateLimitError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &rl) {
		t.Fatalf("error %v is not a RateLimitError", err)
	}
	if !rl.RetryAt.Equal(reset) || rl.Wait != 4*time.Minute+10*time.Second {
		t.Errorf("RetryAt, Wait = %v, %v; want %v, 4m10s", rl.RetryAt, rl.Wait, reset)
	}
	if want := "GitHub rate limit exceeded; retry after 2026-11-29T19:05:00Z (in 4m10s)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if errors.Is(err, ErrForbidden) {
		t.Error("a rate limit is also ErrForbidden")
	}
}

func TestSecondaryRateLimit(t *testing.T) {
	at := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	fixNow(t, at)
	err := commentErr(t, answer(http.StatusTooManyRequests,
		`{"message":"You have exceeded a secondary rate limit."}`, "Retry-After", "60"))
	var rl *RateLimitError
	if !errors.As(err, &rl) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("error %v is not a RateLimitError", err)
	}
	if !rl.RetryAt.Equal(at.Add(time.Minute)) || rl.Wait != time.Minute {
		t.Errorf("RetryAt, Wait = %v, %v; want %v, 1m0s", rl.RetryAt, rl.Wait, at.Add(time.Minute))
	}
}

func TestForbiddenRateLimitMessage(t *testing.T) {
	// A 403 saying "rate limit" with no headers: GitHub says wait a minute.
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fixNow(t, at)
	err := commentErr(t, answer(http.StatusForbidden, `{"message":"You have exceeded a secondary rate limit"}`))
	var rl *RateLimitError
	if !errors.As(err, &rl) || rl.Wait != time.Minute {
		t.Errorf("error %v is not a one-minute RateLimitError", err)
	}
}

func TestForbidden(t *testing.T) {
	err := commentErr(t, answer(http.StatusForbidden, `{"message":"Resource not accessible by personal access token"}`,
		"X-RateLimit-Remaining", "4999"))
	if !errors.Is(err, ErrForbidden) || errors.Is(err, ErrRateLimited) {
		t.Errorf("error %v: want ErrForbidden, not ErrRateLimited", err)
	}
	if !strings.Contains(err.Error(), "Resource not accessible by personal access token") {
		t.Errorf("error %q lacks GitHub's message", err)
	}
}

func TestValidation(t *testing.T) {
	err := commentErr(t, answer(http.StatusUnprocessableEntity,
		`{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long"}]}`))
	if !errors.Is(err, ErrValidation) {
		t.Errorf("error %v is not ErrValidation", err)
	}
	if s := err.Error(); !strings.Contains(s, "Validation Failed") || !strings.Contains(s, "body is too long") {
		t.Errorf("error %q lacks GitHub's message and details", s)
	}
}

func TestOtherStatus(t *testing.T) {
	err := commentErr(t, answer(http.StatusBadGateway, `{"message":"Server Error"}`))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 502 || ae.Err != nil {
		t.Errorf("error %v: want a plain APIError 502", err)
	}
	if s := err.Error(); !strings.Contains(s, "502") || !strings.Contains(s, "Server Error") {
		t.Errorf("error %q lacks status or message", s)
	}
}

func TestTokenEchoRedacted(t *testing.T) {
	// Even if the server echoes the token back, errors must not carry it.
	err := commentErr(t, answer(http.StatusBadRequest, `{"message":"bad token `+testToken+`"}`))
	if !strings.Contains(err.Error(), "[token]") {
		t.Errorf("error %q: want the echoed token redacted", err)
	}
}

func TestNetworkError(t *testing.T) {
	c, _ := fakeAPI(t, answer(http.StatusCreated, `{}`))
	c.BaseURL = "http://127.0.0.1:1" // nothing listens on port 1
	_, err := c.Comment(context.Background(), issue, "hi")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), testToken) {
		t.Errorf("error %v: want one naming the host, without the token", err)
	}
}

func TestBodyTooLong(t *testing.T) {
	c, n := fakeAPI(t, answer(http.StatusCreated, `{"html_url":"x"}`))
	// Characters, not bytes: MaxBodyChars of 'é' (2 bytes each) is allowed.
	if _, err := c.Comment(context.Background(), issue, strings.Repeat("é", MaxBodyChars)); err != nil {
		t.Fatalf("body at the limit: %v", err)
	}
	_, err := c.Comment(context.Background(), issue, strings.Repeat("x", MaxBodyChars+1))
	if !errors.Is(err, ErrBodyTooLong) {
		t.Fatalf("error %v is not ErrBodyTooLong", err)
	}
	if s := err.Error(); !strings.Contains(s, "65537") || !strings.Contains(s, "65536") {
		t.Errorf("error %q does not give the length and the limit", s)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1 (the oversized body must not be sent)", n.Load())
	}
}

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Target
		ok   bool
	}{
		{"haproxy/haproxy#3517", issue, true},
		{"my-org/repo.name_2#1", Target{"my-org", "repo.name_2", 1}, true},
		{"haproxy/haproxy", Target{}, false},
		{"haproxy/haproxy#", Target{}, false},
		{"haproxy/haproxy#abc", Target{}, false},
		{"haproxy/haproxy#0", Target{}, false},
		{"haproxy/haproxy#-3", Target{}, false},
		{"haproxy/haproxy#+3", Target{}, false},
		{"haproxy/haproxy#3#4", Target{}, false},
		{"/haproxy#1", Target{}, false},
		{"haproxy/#1", Target{}, false},
		{"haproxy#1", Target{}, false},
		{"a/b/c#1", Target{}, false},
		{"haproxy/../x#1", Target{}, false},
		{"../haproxy#1", Target{}, false},
		{"ha proxy/haproxy#1", Target{}, false},
		{"", Target{}, false},
	} {
		got, err := ParseTarget(tc.in)
		switch {
		case tc.ok && (err != nil || got != tc.want):
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		case !tc.ok && err == nil:
			t.Errorf("ParseTarget(%q) = %+v, want an error", tc.in, got)
		case !tc.ok && (!errors.Is(err, ErrInvalidTarget) || !strings.Contains(err.Error(), `"`+tc.in+`"`)):
			t.Errorf("ParseTarget(%q) error %q: want ErrInvalidTarget naming the input", tc.in, err)
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
}
