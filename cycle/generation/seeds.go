package generation

// SeedStride is the distance between two generations' seed bases: the
// reference's configs/cycle2.json is configs/paper.json with every seed
// base moved by one million (collection 710000 → 1710000, search 450000 →
// 1450000).
const SeedStride = 1_000_000

// GenerationSeed is generation g's seed base from a cycle's seed s:
// s + (g−1)·SeedStride. Every seed a generation uses derives from its base
// and names (seedOf: collection per task and slot, ring per task, judgment
// per task and pair; a cycle's search per task from the search base), so
// that two generations of one cycle never share a collection, ring, judge
// or search seed, and a cycle and the same generations started one by one
// with the same seed use the same seeds.
func GenerationSeed(s int64, g int) int64 { return s + int64(g-1)*SeedStride }
