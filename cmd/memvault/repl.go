package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/memvault/memvault/agent/claude"
	"github.com/memvault/memvault/vault/escape"
)

// repl runs an interactive conversation on chat: each line read from in is a
// prompt (blank lines are skipped; "/exit" or "/quit" ends it), and the final
// text of each turn goes to out. The prompt marker and the errors of single
// turns go to errOut, and the conversation goes on after them. Replies and
// errors are escaped (escape.Text): the model may echo what a remote wrote into
// a memory, terminal escape sequences included. repl returns
// nil at the end of in, ctx's error when ctx ends, and a *claude.APIError when
// the API refuses the credentials, since no later turn can succeed either.
func repl(ctx context.Context, chat *claude.Chat, in io.Reader, out, errOut io.Writer) error {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	for {
		fmt.Fprint(errOut, "> ")
		var line string
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			fmt.Fprintln(errOut)
			return err
		case line = <-lines:
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		}
		reply, err := chat.Send(ctx, line)
		var ae *claude.APIError
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &ae) && (ae.StatusCode == http.StatusUnauthorized || ae.StatusCode == http.StatusForbidden):
			return err
		case err != nil:
			fmt.Fprintf(errOut, "error: %s\n", safeError(err))
		}
		if reply != "" {
			fmt.Fprintf(out, "%s\n\n", escape.Text(reply))
		}
	}
}
