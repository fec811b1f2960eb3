"""Projectile with quadratic drag, integrated with a fixed-step RK4."""
import math
import sys

G = 9.81
DRAG = 0.012  # k/m in 1/m
DT = 0.001

def deriv(state):
    x, y, vx, vy = state
    v = math.hypot(vx, vy)
    return (vx, vy, -DRAG * v * vx, -G - DRAG * v * vy)

def landing_distance(angle_deg, speed):
    a = math.radians(angle_deg)
    s = (0.0, 0.0, speed * math.cos(a), speed * math.sin(a))
    while True:
        k1 = deriv(s)
        k2 = deriv(tuple(s[i] + DT / 2 * k1[i] for i in range(4)))
        k3 = deriv(tuple(s[i] + DT / 2 * k2[i] for i in range(4)))
        k4 = deriv(tuple(s[i] + DT * k3[i] for i in range(4)))
        n = tuple(s[i] + DT / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) for i in range(4))
        if n[1] < 0:
            frac = s[1] / (s[1] - n[1])
            return s[0] + frac * (n[0] - s[0])
        s = n

if __name__ == "__main__":
    print(f"{landing_distance(float(sys.argv[1]), float(sys.argv[2])):.4f}")
