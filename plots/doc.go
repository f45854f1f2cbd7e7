// Package plots draws commcal's figures with gonum.org/v1/plot, one function per figure, each
// taking plain data (design §7). Its stage is not built yet; `commcal plot` says so.
package plots
