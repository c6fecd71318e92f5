"""Small real projects for the LSP tests and benchmark: a Python package and a TS project."""

from __future__ import annotations

from pathlib import Path

CORE = '''"""Shapes."""


def greet(name: str) -> str:
    return "hello " + name


class Shape:
    def area(self) -> float:
        return 0.0


class Square(Shape):
    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        return self.side * self.side
'''

USE = '''from demo.core import Square, greet


def main() -> None:
    print(greet("x"))
    print(Square(2).area())
'''


def make_python_package(root: Path) -> Path:
    (root / "demo").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (root / "demo" / "__init__.py").write_text("")
    (root / "demo" / "core.py").write_text(CORE)
    (root / "demo" / "use.py").write_text(USE)
    return root


def make_ts_project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "target": "es2020"}, "include": ["src"]}')
    (root / "src" / "lib.ts").write_text("export function twice(n: number): number {\n  return n * 2;\n}\n")
    (root / "src" / "main.ts").write_text('import { twice } from "./lib";\n\nconst x: number = twice(3);\n'
                                          "console.log(x);\n")
    return root
