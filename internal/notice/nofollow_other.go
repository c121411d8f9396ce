//go:build !unix

package notice

const oNoFollow = 0
