"""Walks a @triton.jit function's Python AST and drives the C builder.

What needs Python stays here: constexpr evaluation (plain Python values),
static unrolling (tl.static_range), inlining of nested @triton.jit calls, the
dry runs that discover loop-carried variables, and source locations for errors.
Type rules and IR construction are in C (triton._C.tritium.Builder).
"""
from __future__ import annotations

import ast
import builtins
import operator
import threading

from triton._C import tritium as _C
from triton.language import core as tl
from triton.language import descriptor as _desc
from triton.language.core import _unwrap, constexpr, tensor
from triton.compiler.errors import CompilationError, CompileTimeAssertionFailure

_local = threading.local()

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.MatMult: lambda a, b: tl.dot(a, b),
}
_CMPOPS = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
    ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def _closure_vars(fn):
    """{free variable: value} of a Python function's closure (cells not yet bound left out)."""
    names = getattr(getattr(fn, "__code__", None), "co_freevars", ())
    out = {}
    for n, cell in zip(names, getattr(fn, "__closure__", None) or ()):
        try:
            out[n] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return out


def _is_tensor(x):
    return isinstance(x, tensor)


class _Return(Exception):
    pass


class CodeGenerator(ast.NodeVisitor):
    """One instance per function body being traced (the kernel or an inlined callee)."""

    def __init__(self, jitfn, builder, lscope, depth=0):
        self.fn = jitfn
        self.b = builder
        self.lscope = lscope
        self.gscope = jitfn.fn.__globals__
        self.cscope = _closure_vars(jitfn.fn)  # names the function closes over (a kernel defined in a function)
        self.ret = None
        self.returned = False
        self.depth = depth
        self.file = jitfn.file
        self.line0 = jitfn.def_line
        self.cur_node = None
        self.tail = False  # the statement being visited ends the function body

    # ---- locations and errors -------------------------------------------------------------

    def _loc(self, node):
        ln = getattr(node, "lineno", None)
        if ln is not None:
            self.b.c.set_loc(self.file, self.line0 + ln - 1, getattr(node, "col_offset", 0) + 1)

    def visit(self, node):
        if node is None:
            return None
        prev = self.cur_node
        if hasattr(node, "lineno"):
            self.cur_node = node
            self._loc(node)
        try:
            return super().visit(node)
        except (CompilationError, _Return):
            raise
        except _C.BuilderError as e:
            raise CompilationError(self.fn, self.cur_node or node, str(e)) from None
        except RecursionError:
            raise
        except tl._StaticAssertionFailure as e:
            raise CompileTimeAssertionFailure(self.fn, self.cur_node or node, str(e)) from None
        except Exception as e:  # noqa: BLE001 — every user mistake becomes a located error
            raise CompilationError(self.fn, self.cur_node or node, f"{type(e).__name__}: {e}") from e
        finally:
            self.cur_node = prev
            if prev is not None:
                self._loc(prev)

    def generic_visit(self, node):
        raise NotImplementedError(f"unsupported Python syntax in a kernel: {type(node).__name__}")

    # ---- helpers -------------------------------------------------------------------------

    def wrap(self, ref):
        return self.b.wrap(ref)

    def to_tensor(self, x):
        return tl._to_tensor(x)

    def lookup(self, name):
        if name in self.lscope:
            return self.lscope[name]
        if name in self.cscope:
            return self.cscope[name]
        if name in self.gscope:
            v = self.gscope[name]
            return v
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise NameError(f"name '{name}' is not defined")

    def visit_compound(self, stmts, tail=False):
        """Visits a statement list. tail: nothing runs after it in the function,
        so falling off its end is a `return` (lets `if c: return` guard the rest)."""
        stmts = list(stmts)
        i = 0
        while i < len(stmts):
            if self.returned:
                break
            s = stmts[i]
            self.tail = tail and i == len(stmts) - 1
            # a constexpr if holding a return, with code after it: its branch takes its
            # place in this list, so the return sees the code that follows
            if isinstance(s, ast.If) and i + 1 < len(stmts) and _contains_return(s):
                cond = self._static_cond(s.test)
                if cond is not None:
                    stmts[i:i + 1] = list(s.body if cond else s.orelse)
                    continue
            # `if cond: ...; return` followed by more code: the rest becomes the else branch
            if isinstance(s, ast.If) and _ends_with_return(s.body) and not _ends_with_return(s.orelse) and i + 1 < len(stmts):
                cond = self._static_cond(s.test)
                if cond is None:
                    s = ast.If(test=s.test, body=s.body, orelse=list(s.orelse) + stmts[i + 1:])
                    ast.copy_location(s, stmts[i])
                    self.tail = tail
                    self.visit(s)
                    return
            # at the function's tail, an if with a return anywhere inside (nested ifs)
            # and code after it: the code after runs at the end of each branch that
            # does not end in a return, so every return ends the function
            if tail and isinstance(s, ast.If) and i + 1 < len(stmts) and _contains_return(s):
                cond = self._static_cond(s.test)
                if cond is None:
                    rest = stmts[i + 1:]
                    body = list(s.body) if _ends_with_return(s.body) else list(s.body) + rest
                    orelse = list(s.orelse) if _ends_with_return(s.orelse) else list(s.orelse) + rest
                    s = ast.copy_location(ast.If(test=s.test, body=body, orelse=orelse), stmts[i])
                    self.tail = True
                    self.visit(s)
                    return
            self.visit(s)
            i += 1

    def _static_cond(self, test):
        """The Python value of an if-condition when it is a constexpr, else None."""
        saved = self.b.c
        v = self.visit(test)
        v = _unwrap(v)
        if _is_tensor(v):
            self._pending_cond = v
            return None
        return bool(v)

    # ---- statements ----------------------------------------------------------------------

    def visit_Module(self, node):
        self.visit_compound(node.body)

    def visit_FunctionDef(self, node):
        self.visit_compound(node.body, tail=True)

    def visit_Pass(self, node):
        pass

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.visit(node.value)

    def _assign(self, target, value):
        if isinstance(target, ast.Name):
            self.lscope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            vals = _unwrap(value)
            if _is_tensor(vals):
                raise TypeError("cannot unpack a tensor")
            vals = list(vals)
            if len(vals) != len(target.elts):
                raise ValueError(f"cannot unpack {len(vals)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, vals):
                self._assign(t, v)
        elif isinstance(target, ast.Subscript):
            obj = self.visit(target.value)
            if isinstance(_unwrap(obj), tuple) and isinstance(target.value, ast.Name):
                # `t[i] = v` on a tuple rebinds t to a copy with item i replaced (upstream's tl.tuple)
                items, i = list(_unwrap(obj)), _unwrap(self.visit(target.slice))
                if not isinstance(i, int):
                    raise TypeError("a tuple index must be a compile-time int")
                items[i] = value
                self.lscope[target.value.id] = tuple(items)
                return
            if _is_tensor(obj):
                obj[self.visit(target.slice)] = value  # raises the spine-triton message
            raise NotImplementedError("item assignment is not supported in kernels")
        else:
            raise NotImplementedError(f"unsupported assignment target {type(target).__name__}")

    def visit_Assign(self, node):
        value = self.visit(node.value)
        for t in node.targets:
            self._assign(t, value)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            value = self.visit(node.value)
            ann = self.visit(node.annotation) if node.annotation is not None else None
            if ann is tl.constexpr and not isinstance(value, constexpr):
                value = constexpr(value)
            self._assign(node.target, value)

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise NotImplementedError("augmented assignment only to names")
        cur = self.lookup(node.target.id)
        rhs = self.visit(node.value)
        self.lscope[node.target.id] = self._binop(node.op, cur, rhs)

    def visit_Return(self, node):
        self.ret = self.visit(node.value) if node.value is not None else None
        self.returned = True

    def visit_Assert(self, node):
        cond = _unwrap(self.visit(node.test))
        msg = _unwrap(self.visit(node.msg)) if node.msg is not None else ""
        if _is_tensor(cond):
            tl.device_assert(cond, str(msg))
        elif not cond:
            raise AssertionError(msg if msg else "assertion failed")

    def visit_Break(self, node):
        raise NotImplementedError("`break` is not supported in kernels; use a while loop with a condition")

    def visit_Continue(self, node):
        raise NotImplementedError("`continue` is not supported in kernels; use an if")

    def visit_With(self, node):
        # `with pl.scope("name"):` and similar context managers evaluated at trace time
        managers = [self.visit(item.context_expr) for item in node.items]
        for m in managers:
            m.__enter__()
        try:
            self.visit_compound(node.body)
        finally:
            for m in reversed(managers):
                m.__exit__(None, None, None)

    # ---- control flow --------------------------------------------------------------------

    def visit_If(self, node):
        cond = _unwrap(self.visit(node.test))
        tail = self.tail
        if not _is_tensor(cond):
            self.visit_compound(node.body if cond else node.orelse, tail)
            return
        if cond.type.is_block() and cond.type.numel == 1:
            cond = tl.item(cond)  # a one-element tensor decides as its element (upstream)
        if cond.type.is_block():
            raise TypeError("an if condition must be a scalar; use tl.where for tensors")
        self._dynamic_if(cond, node.body, node.orelse, tail)

    def _dynamic_if(self, cond, body, orelse, tail):
        c = self.b.c
        liveins = dict(self.lscope)
        c.if_begin(cond.handle)
        self.lscope = dict(liveins)
        self.returned, self.ret = False, None
        self.visit_compound(body, tail)
        then_scope, then_ret, then_returned = self.lscope, self.ret, self.returned
        c.if_else()
        self.lscope = dict(liveins)
        self.returned, self.ret = False, None
        self.visit_compound(orelse, tail)
        else_scope, else_ret, else_returned = self.lscope, self.ret, self.returned
        names, then_returned = _if_merge(liveins, then_scope, else_scope, then_ret, else_ret, then_returned,
                                         else_returned, tail)
        # convert values in their own blocks (we are in 'else' now)
        evals = [self._yieldable(else_scope[n], n) for n in names]
        rvals_e = self._flatten_ret(else_ret) if else_returned else []
        c.if_block(0)
        tvals = [self._yieldable(then_scope[n], n) for n in names]
        rvals_t = self._flatten_ret(then_ret) if then_returned else []
        for n, t, e in zip(names, tvals, evals):
            if t.type != e.type:
                raise TypeError(f"Mismatched type for {n} between then block ({t.type}) and else block ({e.type})")
        if len(rvals_t) != len(rvals_e):
            raise TypeError("both branches must return the same number of values")
        res = c.if_end([t.handle for t in tvals + rvals_t], [e.handle for e in evals + rvals_e])
        self.lscope = dict(liveins)
        for n, r in zip(names, res):
            self.lscope[n] = self.wrap(r)
        if then_returned:
            rets = [self.wrap(r) for r in res[len(names):]]
            self.ret = _unflatten_ret(then_ret, rets)
            self.returned = True
        else:
            self.ret, self.returned = None, False

    def _flatten_ret(self, r):
        if r is None:
            return []
        if isinstance(r, tuple):
            return [self.to_tensor(x) for x in r]
        return [self.to_tensor(r)]

    def _yieldable(self, v, name):
        v = _unwrap(v)
        if _is_tensor(v):
            return v
        if isinstance(v, (int, float, bool)):
            return self.to_tensor(v)
        raise TypeError(f"variable {name} changes inside control flow but is not a number or tensor ({v!r})")

    def visit_IfExp(self, node):
        cond = _unwrap(self.visit(node.test))
        if not _is_tensor(cond):
            return self.visit(node.body if cond else node.orelse)
        if cond.type.is_block():
            raise TypeError("a conditional expression needs a scalar condition; use tl.where for tensors")
        c = self.b.c
        c.if_begin(cond.handle)
        tv = self.visit(node.body)
        tv = None if tv is None else self.to_tensor(tv)
        c.if_else()
        ev = self.visit(node.orelse)
        if tv is None and ev is None:  # `store(a) if c else store(b)`: for the effects
            c.if_end([], [])
            return None
        if tv is None or ev is None:
            raise TypeError("a conditional expression needs a value on both sides, or on neither")
        ev = self.to_tensor(ev)
        if tv.type != ev.type:
            raise TypeError(f"Mismatched type between branches ({tv.type} and {ev.type})")
        return self.wrap(c.if_end([tv.handle], [ev.handle])[0])

    def _loop_names(self, liveins, scope, body):
        """Variables a loop carries: those live before it that its body assigns.
        A number assigned in the body is carried even when the dry run left it
        equal (`b = a + b` with a == 0); a constexpr or other Python object only
        when the body actually replaced it."""
        assigned = _assigned_names(body)
        names = []
        for n, v in liveins.items():
            if n not in scope or n not in assigned:
                continue
            new = scope[n]
            if new is v:
                if isinstance(v, constexpr) or not (_is_tensor(_unwrap(v)) or _is_number(v)):
                    continue
            names.append(n)
        return names

    def _iv_dtype(self, *bounds):
        dt = tl.int32
        for v in bounds:
            v = _unwrap(v)
            if _is_tensor(v):
                if v.dtype.is_int() and v.dtype.primitive_bitwidth > dt.primitive_bitwidth:
                    dt = v.dtype
            elif isinstance(v, int) and not (-2**31 <= v < 2**31):
                dt = tl.int64
        return dt

    def visit_For(self, node):
        it = self.visit(node.iter)
        it = _unwrap(it)
        if isinstance(it, builtins.range):
            it = tl.range(it.start, it.stop, it.step)
        if isinstance(it, tl.static_range):
            for i in builtins.range(it.start, it.end, it.step):
                self._assign(node.target, constexpr(i))
                self.visit_compound(node.body)
                if self.returned:
                    raise NotImplementedError("return inside a loop is not supported")
            return
        if not isinstance(it, tl.range):
            raise NotImplementedError("kernels support `for` only over range, tl.range, tl.static_range and smt.parallel")
        if not isinstance(node.target, ast.Name):
            raise NotImplementedError("the loop variable must be a name")
        lb, ub, st = (_unwrap(x) for x in (it.start, it.end, it.step))
        for v, what in ((lb, "start"), (ub, "end"), (st, "step")):
            if not (_is_tensor(v) or isinstance(v, int)):
                raise TypeError(f"loop {what} must be an integer, got {v!r}")
        if isinstance(st, int) and st == 0:
            raise ValueError("range() step must not be zero")
        ivt = self._iv_dtype(lb, ub, st)
        c = self.b.c
        liveins = dict(self.lscope)
        # dry run: discover which variables the body changes and their types
        c.scratch_begin()
        try:
            self.lscope = dict(liveins)
            self.lscope[node.target.id] = self.wrap(c.placeholder(ivt.to_ir(self.b)))
            self.visit_compound(node.body)
            if self.returned:
                raise NotImplementedError("return inside a loop is not supported")
            dry = self.lscope
        finally:
            c.scratch_end()
        names = [n for n in self._loop_names(liveins, dry, node.body) if n != node.target.id]
        if getattr(it, "bind_sub_block", None) is not None and names:  # smt.parallel
            raise ValueError(f"smt.parallel: iterations must be independent, but the loop carries "
                             f"{', '.join(names)} from one iteration to the next; use range() for that loop")
        self.lscope = dict(liveins)
        inits = []
        for n in names:
            init = self._yieldable(liveins[n], n)
            new = _unwrap(dry[n])
            new_t = new.type if _is_tensor(new) else (self.to_tensor(new).type if isinstance(new, (int, float, bool)) else None)
            if new_t is not None and new_t != init.type:
                raise TypeError(f"Loop-carried variable {n} has initial type {init.type} but is re-assigned to "
                                f"{new_t} in loop! Please make sure that the type stays consistent.")
            inits.append(init)
        args = c.for_begin(_opnd(lb), _opnd(ub), _opnd(st), [t.handle for t in inits],
                           bool(getattr(it, "bind_sub_block", False)))
        self.lscope[node.target.id] = self.wrap(args[0])
        for n, a in zip(names, args[1:]):
            self.lscope[n] = self.wrap(a)
        self.visit_compound(node.body)
        yields = [self._yieldable(self.lscope[n], n) for n in names]
        res = c.for_end([y.handle for y in yields])
        self.lscope = dict(liveins)
        for n, r in zip(names, res):
            self.lscope[n] = self.wrap(r)

    def _while_carried(self, node):
        """(live-ins, carried names, their initial tensors) of a while loop: a dry run of
        its test and body (emitting nothing) finds what the body assigns."""
        c = self.b.c
        liveins = dict(self.lscope)
        c.scratch_begin()
        try:
            self.lscope = dict(liveins)
            self.visit(node.test)
            self.visit_compound(node.body)
            dry = self.lscope
        finally:
            c.scratch_end()
        names = self._loop_names(liveins, dry, node.body + [node.test])
        self.lscope = dict(liveins)
        return liveins, names, [self._yieldable(liveins[n], n) for n in names]

    def visit_While(self, node):
        if node.orelse:
            raise NotImplementedError("while ... else is not supported")
        c = self.b.c
        liveins, names, inits = self._while_carried(node)
        before = c.while_begin([t.handle for t in inits])
        for n, a in zip(names, before):
            self.lscope[n] = self.wrap(a)
        cond = _unwrap(self.visit(node.test))
        if not _is_tensor(cond):
            cond = self.to_tensor(bool(cond))
        vals = [self._yieldable(self.lscope[n], n) for n in names]
        after = c.while_cond(cond.handle, [v.handle for v in vals])
        for n, a in zip(names, after):
            self.lscope[n] = self.wrap(a)
        self.visit_compound(node.body)
        if self.returned:
            raise NotImplementedError("return inside a loop is not supported")
        yields = [self._yieldable(self.lscope[n], n) for n in names]
        res = c.while_end([y.handle for y in yields])
        self.lscope = dict(liveins)
        for n, r in zip(names, res):
            self.lscope[n] = self.wrap(r)

    # ---- expressions ----------------------------------------------------------------------

    def visit_Constant(self, node):
        return node.value

    def visit_Name(self, node):
        return self.lookup(node.id)

    def visit_Tuple(self, node):
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node):
        return [self.visit(e) for e in node.elts]

    def visit_Dict(self, node):
        return {self.visit(k): self.visit(v) for k, v in zip(node.keys, node.values)}

    def visit_Slice(self, node):
        return builtins.slice(self.visit(node.lower), self.visit(node.upper), self.visit(node.step))

    def visit_Subscript(self, node):
        obj = self.visit(node.value)
        idx = self.visit(node.slice)
        if _is_tensor(_unwrap(obj)):
            return _unwrap(obj)[idx]
        return _unwrap(obj)[_unwrap(idx)]

    def visit_Attribute(self, node):
        obj = self.visit(node.value)
        if node.attr == "dtype" and isinstance(_unwrap(obj), (bool, int, float)):
            return tl._literal_dtype(_unwrap(obj))  # a Python number's dtype as a literal
        return getattr(obj if _is_tensor(obj) or isinstance(obj, constexpr) and node.attr == "value" else _unwrap(obj),
                       node.attr)

    def visit_JoinedStr(self, node):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                x = _unwrap(self.visit(v.value))
                if _is_tensor(x):
                    raise TypeError("f-strings in kernels may only use constexpr values")
                parts.append(format(x, _unwrap(self.visit(v.format_spec)) if v.format_spec else ""))
        return "".join(parts)

    def visit_FormattedValue(self, node):
        return _unwrap(self.visit(node.value))

    def _binop(self, op, a, b):
        fn = _BINOPS.get(type(op))
        if fn is None:
            raise NotImplementedError(f"unsupported operator {type(op).__name__}")
        ua, ub = _unwrap(a), _unwrap(b)
        if not _is_tensor(ua) and not _is_tensor(ub):
            return constexpr(fn(ua, ub)) if isinstance(a, constexpr) or isinstance(b, constexpr) else fn(ua, ub)
        return fn(ua, ub)

    def visit_BinOp(self, node):
        return self._binop(node.op, self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node):
        v = _unwrap(self.visit(node.operand))
        if isinstance(node.op, ast.Not):
            return tl._unop(tl._NOT, v) if _is_tensor(v) else (not v)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return +v
        if isinstance(node.op, ast.Invert):
            return ~v
        raise NotImplementedError(f"unsupported unary operator {type(node.op).__name__}")

    def visit_Compare(self, node):
        left = self.visit(node.left)
        result = None
        for op, comp in zip(node.ops, node.comparators):
            right = self.visit(comp)
            fn = _CMPOPS[type(op)]
            if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                r = fn(_unwrap(left), _unwrap(right))
            else:
                ul, ur = _unwrap(left), _unwrap(right)
                r = fn(ul, ur)
            if result is None:
                result = r
            elif _is_tensor(result) or _is_tensor(r):
                result = tl._binop(tl._LAND, result, r)
            else:
                result = result and r
            left = right
        return result

    def visit_BoolOp(self, node):
        """`and` / `or`: constexpr operands follow Python (short circuit, the deciding
        value); tensor operands combine with logical and / or."""
        is_and = isinstance(node.op, ast.And)
        acc = None  # the tensor operands so far
        x = None
        for v in node.values:
            x = _unwrap(self.visit(v))
            if not _is_tensor(x):
                if (is_and and not x) or (not is_and and x):
                    return x if acc is None else tl._to_tensor(bool(x))
                continue
            acc = x if acc is None else tl._binop(tl._LAND if is_and else tl._LOR, acc, x)
        return x if acc is None else acc

    def visit_Call(self, node):
        fn = _unwrap(self.visit(node.func))
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(_unwrap(self.visit(a.value)))
            else:
                args.append(self.visit(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                kwargs.update(_unwrap(self.visit(k.value)))
            else:
                kwargs[k.arg] = self.visit(k.value)
        return self.call(fn, args, kwargs)

    def call(self, fn, args, kwargs):
        from triton.runtime.jit import JITFunction
        if isinstance(fn, JITFunction):
            return self.call_jit(fn, args, kwargs)
        if tl.is_builtin(fn):
            return fn(*args, **kwargs)
        if fn is builtins.range:
            return tl.range(*args, **kwargs)
        if fn in (builtins.min, builtins.max) and any(_is_tensor(_unwrap(a)) for a in args):
            f = tl.minimum if fn is builtins.min else tl.maximum
            acc = args[0]
            for a in args[1:]:
                acc = f(acc, a)
            return acc
        if fn is builtins.abs and args and _is_tensor(_unwrap(args[0])):
            return tl.abs(args[0])
        if fn is builtins.print:  # upstream: device_print, the first string the prefix
            if args and isinstance(_unwrap(args[0]), str):
                return tl.device_print(_unwrap(args[0]), *args[1:])
            return tl.device_print("", *args)
        if fn is tl.constexpr:
            return _unwrap(args[0]) if args else None
        if fn is builtins.isinstance:  # on tensors and constexprs, decided while tracing
            return isinstance(_unwrap(args[0]), _unwrap(args[1]))
        if fn is builtins.getattr or fn is builtins.hasattr:
            obj = args[0] if _is_tensor(_unwrap(args[0])) else _unwrap(args[0])
            return fn(obj, *[_unwrap(a) for a in args[1:]])
        if isinstance(fn, type) and issubclass(fn, (tl.range, tl.static_range)):
            return fn(*args, **kwargs)
        # a method bound to a tensor (x.to(...)), or a Python function on constexprs
        if getattr(fn, "__self__", None) is not None and _is_tensor(fn.__self__):
            return fn(*args, **kwargs)
        if any(_is_tensor(_unwrap(a)) for a in list(args) + list(kwargs.values())):
            name = getattr(fn, "__name__", repr(fn))
            raise TypeError(f"Unsupported function referenced: {name} (only @triton.jit functions and "
                            f"triton.language builtins can take tensors)")
        return fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})

    def call_jit(self, fn, args, kwargs):
        if self.depth > 64:
            raise RecursionError("@triton.jit functions nested too deeply (recursion is not supported)")
        bound = fn.bind_for_inline(args, kwargs)
        gen = CodeGenerator(fn, self.b, bound, self.depth + 1)
        prev = getattr(_local, "gen", None)
        _local.gen = gen
        try:
            gen.visit_compound(fn.parse().body[0].body, tail=True)
        finally:
            _local.gen = prev
            self._loc(self.cur_node) if self.cur_node is not None else None
        return gen.ret


_MISSING = object()


def _same_py(a, b):
    a, b = _unwrap(a), _unwrap(b)
    try:
        return type(a) is type(b) and a == b
    except Exception:  # noqa: BLE001
        return False


def _if_merge(liveins, then_scope, else_scope, then_ret, else_ret, then_returned, else_returned, tail):
    """(names an if must merge, whether it returns) after tracing both branches: the
    names both branches bind whose values changed, and the return rule (a return on one
    path needs one on the other, except a bare return at the function's end)."""
    if then_returned != else_returned:
        # at the end of the function, falling off the end is a bare `return`
        if tail and then_ret is None and else_ret is None:
            then_returned = True
        else:
            raise NotImplementedError("a return inside an if must be matched by a return on the other path "
                                      "(or be a bare `return` whose if ends the function)")
    names = []
    for n in then_scope:
        if n not in else_scope:
            continue
        tv, ev, lv = then_scope[n], else_scope[n], liveins.get(n, _MISSING)
        if tv is lv and ev is lv:
            continue
        if not _is_tensor(_unwrap(tv)) and not _is_tensor(_unwrap(ev)) and _same_py(tv, ev):
            continue
        names.append(n)
    return names, then_returned


def _is_number(v):
    return isinstance(v, (int, float, bool))


def _assigned_names(stmts):
    """Names bound anywhere in the statements (assignments, loop targets, walrus)."""
    out = set()
    for st in stmts:
        for node in ast.walk(st):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for x in ast.walk(t):
                        if isinstance(x, ast.Name):
                            out.add(x.id)
    return out


def _ends_with_return(stmts):
    return bool(stmts) and isinstance(stmts[-1], ast.Return)


def _contains_return(node):
    """Whether a return statement is inside node (nested function bodies excluded)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and n is not node:
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


def _unflatten_ret(template, flat):
    if isinstance(template, tuple):
        return tuple(flat)
    return flat[0] if flat else None


def _opnd(x):
    return tl._opnd(x)


# the parameter type of each scalar kind of a specialisation (the launcher's spec)
_SCALAR_KINDS = {"i1": tl.int1, "i32": tl.int32, "i64": tl.int64, "u64": tl.uint64, "fp16": tl.float16,
                 "bf16": tl.bfloat16, "fp32": tl.float32, "fp64": tl.float64}


def _rebuild_tuple(lay, prefix, lscope):
    """The tuple a _TupleTwin's leaf parameters (named prefix[i][j]...) were flattened from."""
    cls, subs = lay
    items = [lscope.pop(f"{prefix}[{i}]") if sub is None else _rebuild_tuple(sub, f"{prefix}[{i}]", lscope)
             for i, sub in enumerate(subs)]
    return cls(*items) if cls is not None else tuple(items)


def generate(jitfn, builder, spec):
    """Builds the kernel IR for one specialisation. Returns the slot plan (one slot
    kind per parameter, _C.SLOT_KINDS)."""
    c = builder.c
    params = jitfn.params
    lscope = {}
    ptypes, divs, ir_params, plan = [], [], [], []
    descs = []  # (name, first IR parameter, spec entry) of tensor descriptor arguments
    for p, s in zip(params, spec):
        kind = s[0]
        plan.append(_C.SLOT_KINDS[kind])
        if kind == "constexpr":
            lscope[p.name] = constexpr(s[1])
            continue
        if kind == "tensordesc":
            plan[-1] |= _desc.arg_mask(s) << 8
            descs.append((p.name, len(ptypes), s))
            for t, div in _desc.arg_types(s):
                ptypes.append(t.to_ir(builder))
                divs.append(div)
            continue
        if kind == "ptr":
            t = tl.pointer_type(tl._DTYPES[s[1]])
            div = s[2]
        else:
            t = _SCALAR_KINDS[kind]
            div = s[1] if kind in ("i32", "i64", "u64") else 0
        ptypes.append(t.to_ir(builder))
        divs.append(16 if div else 0)
        ir_params.append((p.name, len(ptypes) - 1))
    c.set_loc(jitfn.file, jitfn.def_line, 1)
    c.func_begin(jitfn.__name__, True, ptypes, divs)
    for name, i in ir_params:
        lscope[name] = builder.wrap(c.param(i))
    for name, lay in getattr(jitfn, "_tuple_layout", ()):  # a _TupleTwin: its tuples back together
        if lay is not None:
            lscope[name] = _rebuild_tuple(lay, name, lscope)
    with tl._set_builder(builder):
        for name, first, s in descs:
            n = len(_desc.arg_types(s))
            lscope[name] = _desc.from_args(s, [builder.wrap(c.param(first + j)) for j in range(n)])
    gen = CodeGenerator(jitfn, builder, lscope)
    _local.gen = gen
    try:
        with tl._set_builder(builder):
            tree = jitfn.parse()
            gen.visit_compound(tree.body[0].body, tail=True)
    finally:
        _local.gen = None
    c.func_end()
    return plan


def _current():
    g = getattr(_local, "gen", None)
    if g is None:
        raise RuntimeError("tl.reduce / tl.associative_scan can only be used inside a kernel")
    return g


def _call_combine(kind, input, axis, combine_fn, keep_dims=False, reverse=False):
    gen = _current()
    c = gen.b.c
    inputs = _unwrap(input)
    single = not isinstance(inputs, (tuple, list))
    inputs = [inputs] if single else list(inputs)
    inputs = [tl._to_tensor(x) for x in inputs]
    axis = _unwrap(axis)
    if axis is None:
        inputs = [tl.reshape(x, [x.numel.value], can_reorder=True) for x in inputs]
        axis = 0
    if kind == "reduce":
        args = c.reduce_begin([x.handle for x in inputs], int(axis))
    else:
        args = c.scan_begin([x.handle for x in inputs], int(axis), bool(_unwrap(reverse)))
    wrapped = [gen.wrap(a) for a in args]
    ret = gen.call_jit(_unwrap(combine_fn), wrapped, {})
    rets = list(ret) if isinstance(ret, tuple) else [ret]
    rets = [tl._to_tensor(r) for r in rets]
    res = (c.reduce_end if kind == "reduce" else c.scan_end)([r.handle for r in rets])
    outs = [gen.wrap(r) for r in res]
    if kind == "reduce" and _unwrap(keep_dims):
        outs = [tl.expand_dims(o, int(axis)) for o in outs]
    return outs[0] if single else tuple(outs)
