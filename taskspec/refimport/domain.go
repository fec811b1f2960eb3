package refimport

// Domain is the persona of the reference's query-number bands: 1-99
// quantitative finance, 200-299 pharmacy, 300-399 robotics; "" outside them.
func Domain(q int) string {
	switch {
	case q >= 1 && q <= 99:
		return "quant"
	case q >= 200 && q <= 299:
		return "pharmacy"
	case q >= 300 && q <= 399:
		return "robotics"
	}
	return ""
}
