package tokenizer

// byteLevel returns GPT-2's reversible byte-to-rune table: printable Latin-1 bytes map to
// themselves, the others to U+0100 onwards in byte order.
func byteLevel() (enc [256]rune, dec map[rune]byte) {
	dec = make(map[rune]byte, 256)
	printable := func(b int) bool {
		return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
	}
	n := 0
	for b := 0; b < 256; b++ {
		if printable(b) {
			enc[b] = rune(b)
		} else {
			enc[b] = rune(256 + n)
			n++
		}
		dec[enc[b]] = byte(b)
	}
	return enc, dec
}
