package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// ErrShrunk reports a transcript smaller than the offset already read: a
// transcript only grows, so the file was replaced or truncated and the offset
// no longer means anything in it.
var ErrShrunk = errors.New("transcript is smaller than the offset already read")

const (
	defaultMaxToolResult = 2000
	defaultMaxToolInput  = 300
	defaultMaxLine       = 32 << 20

	// Most lines fit, so most lines are parsed straight out of the reader's
	// buffer without a copy.
	readBufSize = 64 << 10
)

func (o Options) withDefaults() Options {
	if o.MaxToolResult <= 0 {
		o.MaxToolResult = defaultMaxToolResult
	}
	if o.MaxToolInput <= 0 {
		o.MaxToolInput = defaultMaxToolInput
	}
	if o.MaxLine <= 0 {
		o.MaxLine = defaultMaxLine
	}
	return o
}

// headOpen is Result.CopiedBefore for a file whose head was read without
// its first queue-operation yet: copies may still follow.
var headOpen = time.UnixMilli(1)

// ReadFile reads the transcript at path from byte offset start; see Read.
func ReadFile(path string, start int64, opt Options) (Result, error) {
	if start < 0 {
		return Result{End: start}, fmt.Errorf("read transcript %s: negative offset %d", path, start)
	}
	f, err := os.Open(path)
	if err != nil {
		return Result{End: start}, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Result{End: start}, fmt.Errorf("read transcript: %w", err)
	}
	if fi.Size() < start {
		return Result{End: start}, fmt.Errorf("read transcript %s: size %d, offset %d: %w", path, fi.Size(), start, ErrShrunk)
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return Result{End: start}, fmt.Errorf("read transcript %s: %w", path, err)
	}
	res, err := Read(f, start, opt)
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// Read parses the transcript lines r yields, r being positioned at byte
// offset start of the file. It stops before a last line without its newline:
// Claude Code may still be writing it, and the next read picks it up whole.
// Blank lines are passed over without counting as skipped. On a read error
// the Result still holds every complete line read before it, so a caller may
// store it and advance to Result.End.
func Read(r io.Reader, start int64, opt Options) (Result, error) {
	return read(r, start, opt, readBufSize)
}

// read is Read with the size of its buffer as a parameter, so that tests can
// send short lines down the path of lines longer than the buffer.
func read(r io.Reader, start int64, opt Options, bufSize int) (res Result, err error) {
	opt = opt.withDefaults()
	p := parser{opt: opt, head: start == 0 || !opt.CopiedBefore.IsZero()}
	if !opt.CopiedBefore.Equal(headOpen) {
		p.copiedBefore = opt.CopiedBefore
	}
	res = Result{End: start}
	defer func() { // on every return: res is the named result
		if p.head {
			res.CopiedBefore = p.copiedBefore
			if res.CopiedBefore.IsZero() {
				res.CopiedBefore = headOpen
			}
		}
		res.Copied = p.copied
	}()
	br := bufio.NewReaderSize(r, bufSize)
	var buf []byte
	for {
		line, size, skip, err := readLine(br, &buf, opt.MaxLine)
		if err != nil {
			if err == io.EOF {
				return res, nil
			}
			return res, fmt.Errorf("read transcript at offset %d: %w", res.End, err)
		}
		off := res.End
		res.End += size
		if skip {
			res.Skipped++
			continue
		}
		var ok bool
		if res.Messages, ok = p.line(res.Messages, line, off, res.End); !ok {
			res.Skipped++
		}
	}
}

// readLine returns the next complete line and its size in bytes, newline
// included. A line longer than maxLine (newline excluded) is consumed without
// being kept and reported with skip set, so that one enormous line costs no
// more memory than maxLine. The line is valid until the next call: it is
// usually a slice of br's buffer, otherwise of *buf.
// A last line without newline is not consumed: readLine returns io.EOF.
func readLine(br *bufio.Reader, buf *[]byte, maxLine int64) (line []byte, size int64, skip bool, err error) {
	// A line longer than br's buffer comes in pieces. Copies of the pieces
	// are joined once the line is known to be complete and short enough:
	// growing one buffer instead would allocate two to five times the line.
	var pieces [][]byte
	var kept int64
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			if !skip && kept+int64(len(chunk)) > maxLine {
				skip, pieces = true, nil
			}
			if !skip {
				pieces = append(pieces, bytes.Clone(chunk))
				kept += int64(len(chunk))
			}
			continue
		}
		if err != nil {
			// io.EOF after a partial line included: that line is not complete.
			return nil, 0, false, err
		}
		if skip || kept+int64(len(chunk))-1 > maxLine {
			return nil, size, true, nil
		}
		if pieces == nil {
			return chunk, size, false, nil
		}
		n := int(kept) + len(chunk)
		if cap(*buf) < n {
			*buf = make([]byte, 0, n)
		}
		b := (*buf)[:0]
		for _, p := range pieces {
			b = append(b, p...)
		}
		*buf = append(b, chunk...)
		return *buf, size, false, nil
	}
}
