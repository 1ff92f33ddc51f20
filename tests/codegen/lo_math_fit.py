#!/usr/bin/env python3
"""lo_math_fit.py — computes the minimax polynomial coefficients used by
compiler/src/lo_math.c (Lawson's iteratively reweighted least squares on
Chebyshev nodes, targets evaluated with mpmath) and prints them as C arrays of
f32 hex literals. Needs numpy and mpmath (.venv). Run: .venv/bin/python3 tests/codegen/lo_math_fit.py
"""
import struct

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def f32(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0]


def hexf(v):
    m, p = float.hex(v).split('p')
    return m.rstrip('0').rstrip('.') + 'p' + p + 'f'


def lawson(xs, target, basis, weight, iters=400):
    a = np.array([[b(x) for b in basis] for x in xs], dtype=np.float64)
    y = np.array([target(x) for x in xs], dtype=np.float64)
    w = np.array([weight(x) for x in xs], dtype=np.float64)
    u = np.ones(len(xs)) / len(xs)
    for _ in range(iters):
        sw = np.sqrt(u) * w
        c, *_ = np.linalg.lstsq(a * sw[:, None], y * sw, rcond=None)
        e = np.abs((a @ c - y) * w)
        u = u * e
        u /= u.sum()
    return c, e.max()


def cheb(a, b, n=3000):
    k = np.arange(n)
    return 0.5 * (a + b) + 0.5 * (b - a) * np.cos(np.pi * (k + 0.5) / n)


def emit(name, comment, c, err):
    lits = ', '.join(hexf(f32(v)) for v in c)
    print('/* %s (max weighted error %.2g) */' % (comment, err))
    print('static const float %s[] = {%s};' % (name, lits))


def powers(n, step=1):
    return [lambda x, k=k: x ** (step * k) for k in range(n)]


def main():
    h = float(mp.log(2)) / 2 + 1e-3
    c, e = lawson(cheb(-h, h), lambda r: float((mp.exp(r) - 1 - r) / r ** 2), powers(5),
                  lambda r: r * r / float(mp.exp(r)))
    emit('exp_p', 'e^r = 1 + r + r^2 P(r), |r| <= ln2/2', c, e)
    c, e = lawson(cheb(-0.501, 0.501), lambda r: float((mp.power(2, r) - 1) / r), powers(6),
                  lambda r: abs(r) / float(mp.power(2, r)))
    emit('exp2_p', '2^r = 1 + r P(r), |r| <= 1/2', c, e)
    c, e = lawson(cheb(-h, h), lambda r: float((mp.expm1(r) - r) / r ** 2), powers(5),
                  lambda r: r * r / abs(float(mp.expm1(r))))
    emit('expm1_q', 'e^r - 1 = r + r^2 Q(r), |r| <= ln2/2', c, e)
    for name, fname, f, a, b, n in (('atan_a', 'atan', mp.atan, 1e-4, 0.41422, 5), ('asin_p', 'asin', mp.asin, 1e-4, 0.5, 6),
                             ('tanh_t', 'tanh', mp.tanh, 1e-4, 0.625, 6)):
        c, e = lawson(cheb(a, b), lambda x: float((f(mp.mpf(x)) - x) / x ** 3), powers(n, 2),
                      lambda x: abs(x ** 3 / float(f(mp.mpf(x)))))
        emit(name, '%s x = x + x^3 P(x^2) on [0, %g]' % (fname, b), c, e)
    c, e = lawson(cheb(1e-4, 0.84), lambda x: float(mp.erf(x) / x), powers(6, 2),
                  lambda x: float(x / mp.erf(x)))
    emit('erf_e', 'erf x = x E(x^2), |x| < 0.84', c, e)
    c, e = lawson(cheb(0.84, 3.92), lambda a: float(mp.log(mp.erfc(a), 2)),
                  [lambda a, k=k: (a - 0.84) ** k for k in range(6)], lambda a: float(mp.erfc(a)))
    emit('erfc_l', 'erfc a = 2^L(a - 0.84), 0.84 <= a <= 3.92', c, e)
    c, e = lawson(cheb(-0.501, 0.501), lambda r: float((mp.power(2, r) - 1) / r), powers(5),
                  lambda r: abs(r) / float(mp.power(2, r)))
    emit('erfc_x', '2^r = 1 + r P(r), |r| <= 1/2 (erfc only)', c, e)


if __name__ == '__main__':
    main()
