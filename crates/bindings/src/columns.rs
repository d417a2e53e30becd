//! Record tables to Python, each column converted once: numeric and boolean vectors move into
//! NumPy arrays without copying (`PyArray1::from_vec` takes the allocation), plain strings
//! become a list, dictionary-encoded strings a `(codes, dict)` pair that Python turns into a
//! `pyarrow.DictionaryArray`.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use burstlab_sim::record::{Column, Table};

/// A column on its way to Python.
pub struct PyColumn(pub Column);

/// A table on its way to Python: `{column name: PyColumn}` in schema order.
pub struct PyTable(pub Table);

impl<'py> IntoPyObject<'py> for PyColumn {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.0 {
            Column::U64(v) => PyArray1::from_vec(py, v).into_any(),
            Column::I64(v) => PyArray1::from_vec(py, v).into_any(),
            Column::F64(v) => PyArray1::from_vec(py, v).into_any(),
            Column::Bool(v) => PyArray1::from_vec(py, v).into_any(),
            Column::Str(v) => PyList::new(py, v)?.into_any(),
            Column::Dict { codes, dict } => {
                let codes = PyArray1::from_vec(py, codes).into_any();
                let dict = PyList::new(py, dict)?.into_any();
                PyTuple::new(py, [codes, dict])?.into_any()
            }
        })
    }
}

impl<'py> IntoPyObject<'py> for PyTable {
    type Target = PyDict;
    type Output = Bound<'py, PyDict>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let columns = PyDict::new(py);
        for (name, column) in self.0.columns {
            columns.set_item(name, PyColumn(column))?;
        }
        Ok(columns)
    }
}
