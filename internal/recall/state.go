package recall

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The prompt hook never writes to the database: what it injected and what
// was accessed go to small append-only files that the worker folds in.

// injectedPath lists the ids already injected in a session.
func injectedPath(home, sessionID string) string {
	return filepath.Join(Dir(home), "injected-"+sessionID+".txt")
}

// AccessLogPath is the append-only log of recalled ids.
func AccessLogPath(home string) string { return filepath.Join(Dir(home), "access.log") }

// Injected returns the ids already injected in a session.
func Injected(home, sessionID string) map[string]bool {
	out := map[string]bool{}
	if sessionID == "" {
		return out
	}
	data, err := readSmall(injectedPath(home, sessionID), 1<<20)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out[line] = true
		}
	}
	return out
}

// RecordInjected appends ids to the session's injected list and to the
// access log, each with one write.
func RecordInjected(home, sessionID string, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	if err := os.MkdirAll(Dir(home), 0o700); err != nil {
		return err
	}
	var inj, acc bytes.Buffer
	stamp := strconv.FormatInt(now.UnixMilli(), 10)
	for _, id := range ids {
		inj.WriteString(id + "\n")
		acc.WriteString(stamp + "\t" + id + "\n")
	}
	var errs []error
	if sessionID != "" {
		errs = append(errs, appendFile(injectedPath(home, sessionID), inj.Bytes()))
	}
	errs = append(errs, appendFile(AccessLogPath(home), acc.Bytes()))
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Access is one recorded retrieval.
type Access struct {
	ID string
	At time.Time
}

// ParseAccessLog reads an access log's lines; bad lines are skipped.
func ParseAccessLog(data []byte) []Access {
	var out []Access
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		stamp, id, ok := strings.Cut(sc.Text(), "\t")
		ms, err := strconv.ParseInt(stamp, 10, 64)
		if !ok || err != nil || id == "" {
			continue
		}
		out = append(out, Access{ID: id, At: time.UnixMilli(ms)})
	}
	return out
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", path, st.Size(), max)
	}
	data := make([]byte, st.Size())
	_, err = f.ReadAt(data, 0)
	return data, err
}

// ReadSmall reads a file of at most max bytes without following a symlink.
func ReadSmall(path string, max int64) ([]byte, error) { return readSmall(path, max) }
