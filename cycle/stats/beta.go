package stats

import "math"

// regIncBeta is the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and x in [0, 1], with y = 1 - x passed in separately so that a
// caller who knows y exactly loses nothing to cancellation. It evaluates
// the continued fraction of I_x(a, b) where it converges fast (x below
// the mean (a+1)/(a+b+2)) and 1 - I_y(b, a) elsewhere.
func regIncBeta(a, b, x, y float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsNaN(y) || a <= 0 || b <= 0:
		return math.NaN()
	case x <= 0:
		return 0
	case y <= 0:
		return 1
	}
	if x > (a+1)/(a+b+2) {
		return 1 - regIncBetaCF(b, a, y, x)
	}
	return regIncBetaCF(a, b, x, y)
}

// regIncBetaCF is x^a y^b / (a B(a,b)) times the continued fraction
//
//	1/(1+ d1/(1+ d2/(1+ …)))
//	d_k = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))   k = 2m+1 odd
//	d_k =  m(b-m) x / ((a+2m-1)(a+2m))         k = 2m even
//
// evaluated by the modified Lentz method as 0 + a_1/(1 + a_2/(1 + …)) with
// a_1 = 1 and a_j = d_{j-1}.
func regIncBetaCF(a, b, x, y float64) float64 {
	lbeta := lgamma(a) + lgamma(b) - lgamma(a+b)
	front := math.Exp(a*math.Log(x) + b*math.Log(y) - lbeta)

	const tiny = 1e-300
	const eps = 1e-16
	nonzero := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	f, c, d := tiny, tiny, 0.0
	for j := 1; j <= 20000; j++ {
		num := 1.0
		if k := j - 1; k > 0 {
			if k%2 == 1 {
				m := float64(k-1) / 2
				num = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
			} else {
				m := float64(k) / 2
				num = m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
			}
		}
		d = 1 / nonzero(1+num*d)
		c = nonzero(1 + num/c)
		delta := c * d
		f *= delta
		if j > 1 && math.Abs(delta-1) < eps {
			break
		}
	}
	return front * f / a
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// studentTTwoSided is P(|T| ≥ |t|) for Student's t with df degrees of
// freedom: I_{df/(df+t²)}(df/2, 1/2).
func studentTTwoSided(t, df float64) float64 {
	if math.IsNaN(t) || math.IsNaN(df) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		return 0
	}
	t2 := t * t
	return regIncBeta(df/2, 0.5, df/(df+t2), t2/(df+t2))
}
