package cuda

// BiasRows is the reference for bias_fill_bf16 in bias.cu: bias repeated for each of rows
// rows. The projection's product then accumulates onto it (beta = 1), giving
// y = x·Wᵀ + b with a single rounding.
func BiasRows(bias []float32, rows int) []float32 {
	out := make([]float32, 0, rows*len(bias))
	for range rows {
		out = append(out, bias...)
	}
	return out
}
