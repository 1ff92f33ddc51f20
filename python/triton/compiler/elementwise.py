"""tl.map_elementwise(scalar_fn, *args, pack=1): a @triton.jit function written for
scalars, applied to every element of broadcast tensors.

The function is traced once on whole tensors. Control flow on its (now tensor)
arguments is predicated: an `if` whose condition differs per element runs both
branches and merges every variable they assign, and the values they return, with
tl.where; a conditional expression does the same (an untaken `a // b` guarded by
`if b != 0` is harmless: integer division by zero does not trap in Tritium's code,
its lanes are discarded). A `while` whose condition differs per element
loops while any element still runs, updating only the elements that do. A `for`
whose bounds differ per element is an error naming its line. Side effects (stores,
atomics, prints) inside such branches would run for every element: keep scalar
functions pure, as upstream's region requires.

pack=k hands the function k consecutive elements (along the last dim) of each
argument at once: f(a0, ..., a{k-1}, b0, ..., b{k-1}) returns k values per result,
in the same order.
"""
from __future__ import annotations

from triton.language import core as tl
from triton.language.core import _unwrap
from triton.compiler import code_generator as cg


def _is_block(v):
    return cg._is_tensor(v) and v.type.is_block()


class ElementwiseGen(cg.CodeGenerator):
    """Traces a scalar function (and the @jit functions it calls) on tensors."""

    def __init__(self, jitfn, builder, lscope, depth=0, active=None):
        super().__init__(jitfn, builder, lscope, depth)
        self.active = active  # elements the current branch runs for (None: all)

    def _and_active(self, m):
        return m if self.active is None else tl._binop(tl._LAND, self.active, m)

    # ---- if / conditional expressions -------------------------------------------------------

    def visit_If(self, node):
        cond = _unwrap(self.visit(node.test))
        if not _is_block(cond):
            # a constexpr or a scalar: the ordinary (static or scf.if) path; the test is
            # traced again there, the first trace is dead code
            return super().visit_If(node)
        self._predicated_if(cond, node.body, node.orelse, self.tail)

    def _branch(self, liveins, mask, stmts, tail):
        saved = self.active
        self.lscope = dict(liveins)
        self.returned, self.ret = False, None
        self.active = self._and_active(mask)
        try:
            self.visit_compound(stmts, tail)
        finally:
            self.active = saved
        return self.lscope, self.ret, self.returned

    def _merge(self, cond, t, e, what):
        t, e = self._yieldable(t, what), self._yieldable(e, what)
        if t.dtype != e.dtype:
            raise TypeError(f"Mismatched type for {what} between then block ({t.dtype}) and else block ({e.dtype})")
        return tl.where(cond, t, e)

    def _predicated_if(self, cond, body, orelse, tail):
        liveins = dict(self.lscope)
        then_scope, then_ret, then_returned = self._branch(liveins, cond, body, tail)
        else_scope, else_ret, else_returned = self._branch(liveins, ~cond, orelse, tail)
        names, then_returned = cg._if_merge(liveins, then_scope, else_scope, then_ret, else_ret, then_returned,
                                            else_returned, tail)
        self.lscope = dict(liveins)
        for n in names:
            self.lscope[n] = self._merge(cond, then_scope[n], else_scope[n], n)
        self.returned = then_returned
        self.ret = None
        if then_returned and (then_ret is not None or else_ret is not None):
            tr, er = self._flatten_ret(then_ret), self._flatten_ret(else_ret)
            if len(tr) != len(er):
                raise TypeError("both branches must return the same number of values")
            vals = [self._merge(cond, t, e, "the returned value") for t, e in zip(tr, er)]
            self.ret = cg._unflatten_ret(then_ret, vals)

    def visit_IfExp(self, node):
        cond = _unwrap(self.visit(node.test))
        if not _is_block(cond):
            return super().visit_IfExp(node)
        saved = self.active
        try:
            self.active = self._and_active(cond)
            t = self.visit(node.body)
            self.active = self._and_active(~cond)
            e = self.visit(node.orelse)
        finally:
            self.active = saved
        return self._merge(cond, t, e, "the conditional expression")

    # ---- loops ------------------------------------------------------------------------------

    def visit_For(self, node):
        c = self.b.c
        c.scratch_begin()  # look at the bounds without emitting them
        try:
            it = _unwrap(self.visit(node.iter))
        finally:
            c.scratch_end()
        bounds = (it.start, it.end, it.step) if isinstance(it, tl.range) else \
            (it.start, it.stop, it.step) if isinstance(it, range) else ()
        if any(_is_block(_unwrap(b)) for b in bounds):
            raise NotImplementedError("tl.map_elementwise: a for loop whose trip count depends on the element is "
                                      "not supported (use a while loop)")
        super().visit_For(node)

    def visit_While(self, node):
        c = self.b.c
        c.scratch_begin()
        try:
            per_element = _is_block(_unwrap(self.visit(node.test)))
        finally:
            c.scratch_end()
        if not per_element:
            return super().visit_While(node)
        if node.orelse:
            raise NotImplementedError("while ... else is not supported")
        self._predicated_while(node)

    def _predicated_while(self, node):
        """while any element runs: the body updates only the running elements."""
        c = self.b.c
        liveins, names, inits = self._while_carried(node)
        run0 = self._and_active(_unwrap(self.visit(node.test)))  # carried too: the loop forwards it
        before = c.while_begin([t.handle for t in inits + [run0]])
        for n, a in zip(names, before):
            self.lscope[n] = self.wrap(a)
        run = self._and_active(_unwrap(self.visit(node.test)))
        anyrun = tl.reduce_or(tl.reshape(run, [run.numel], can_reorder=True), 0)
        vals = [self._yieldable(self.lscope[n], n) for n in names]
        after = c.while_cond(anyrun.handle, [v.handle for v in vals + [run]])
        old = {n: self.wrap(a) for n, a in zip(names, after)}
        run = self.wrap(after[-1])
        self.lscope.update(old)
        saved = self.active
        self.active = run
        try:
            self.visit_compound(node.body)
        finally:
            self.active = saved
        if self.returned:
            raise NotImplementedError("return inside a loop is not supported")
        yields = [self._merge(run, self.lscope[n], old[n], n) for n in names]
        for n, y, i in zip(names, yields, inits):
            if y.type != i.type:
                raise TypeError(f"loop variable {n} changes type in the loop ({i.type} to {y.type})")
        res = c.while_end([y.handle for y in yields + [run]])
        self.lscope = dict(liveins)
        for n, r in zip(names, res):
            self.lscope[n] = self.wrap(r)

    # ---- calls ----------------------------------------------------------------------------------

    def call_jit(self, fn, args, kwargs):
        if self.depth > 64:
            raise RecursionError("@triton.jit functions nested too deeply (recursion is not supported)")
        gen = ElementwiseGen(fn, self.b, fn.bind_for_inline(args, kwargs), self.depth + 1, self.active)
        return _run(gen, fn, self)


def _run(gen, fn, caller):
    prev = getattr(cg._local, "gen", None)
    cg._local.gen = gen
    try:
        gen.visit_compound(fn.parse().body[0].body, tail=True)
    finally:
        cg._local.gen = prev
        if caller is not None and caller.cur_node is not None:
            caller._loc(caller.cur_node)
    return gen.ret


def _unpack(x, pack):
    """[x[..., j::pack] for j in range(pack)] (pack a power of two)."""
    if pack == 1:
        return [x]
    shape = [int(s) for s in x.shape]
    a, b = tl.split(tl.reshape(x, shape[:-1] + [shape[-1] // 2, 2]))
    pa, pb = _unpack(a, pack // 2), _unpack(b, pack // 2)
    return [v for pair in zip(pa, pb) for v in pair]


def _repack(parts):
    """The inverse of _unpack."""
    if len(parts) == 1:
        return parts[0]
    j = tl.join(_repack(parts[0::2]), _repack(parts[1::2]))
    shape = [int(s) for s in j.shape]
    return tl.reshape(j, shape[:-2] + [shape[-2] * 2])


def map_elementwise(scalar_fn, *args, pack=1):
    from triton.runtime.jit import JITFunction
    fn = _unwrap(scalar_fn)
    pack = int(_unwrap(pack))
    if not isinstance(fn, JITFunction):
        raise TypeError("tl.map_elementwise: the scalar function must be a @triton.jit function")
    if pack < 1 or pack & (pack - 1):
        raise ValueError(f"tl.map_elementwise: pack must be a power of two >= 1, got {pack}")
    ts = [tl._to_tensor(a) for a in args]
    if not ts:
        raise TypeError("tl.map_elementwise needs at least one tensor argument")
    shape = None
    for t in ts:
        if t.type.is_block():
            ts_ = [int(s) for s in t.shape]
            if shape is None:
                shape = ts_
                continue
            n = max(len(shape), len(ts_))
            x, y = [1] * (n - len(shape)) + shape, [1] * (n - len(ts_)) + ts_
            if any(p != q and 1 not in (p, q) for p, q in zip(x, y)):
                raise ValueError(f"tl.map_elementwise: shapes {shape} and {ts_} do not broadcast")
            shape = [max(p, q) for p, q in zip(x, y)]
    if shape is not None:
        ts = [tl.broadcast_to(t, shape) for t in ts]
    if pack > 1 and (shape is None or shape[-1] % pack):
        raise ValueError(f"tl.map_elementwise: pack={pack} needs a last dimension divisible by it, got shape {shape}")
    scalar_args = [p for t in ts for p in _unpack(t, pack)]
    caller = cg._current()
    ret = _run(ElementwiseGen(fn, caller.b, fn.bind_for_inline(scalar_args, {}), caller.depth + 1), fn, caller)
    single = not isinstance(ret, tuple)
    rets = [ret] if single else list(ret)
    if any(r is None for r in rets):
        raise TypeError("tl.map_elementwise: the scalar function must return a value on every path")
    part_shape = [int(s) for s in scalar_args[0].shape] if shape is not None else None
    rets = [tl._to_tensor(r) for r in rets]
    if part_shape is not None:
        rets = [tl.broadcast_to(r, part_shape) for r in rets]
    if len(rets) % pack:
        raise ValueError(f"tl.map_elementwise: pack={pack} needs a multiple of {pack} results, got {len(rets)}")
    outs = []
    for k in range(0, len(rets), pack):
        group = rets[k:k + pack]
        if any(g.dtype != group[0].dtype for g in group):
            raise TypeError("tl.map_elementwise: type mismatch in unpacked results")
        outs.append(_repack(group))
    return outs[0] if single else tuple(outs)  # as upstream: a tuple when the function returns one
