// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package hydrate

// exchange swaps two folders; this system has no atomic exchange.
func exchange(a, b string) error { return exchangeByRenames(a, b) }
