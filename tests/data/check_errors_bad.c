static PyObject *a(PyObject *o)
{
    if (o == Py_None) {
        PyErr_SetString(PyExc_TypeError, "x");
        Py_RETURN_NONE;
    }
    int k = 3;
    if (k > 2)
        return NULL;
    char *p = malloc(3);
    if (!p)
        return NULL;
    long v = PyLong_AsLong(o);
    PyObject *t = PySequence_Tuple(o);
    return PyLong_FromLong(v + PyTuple_GET_SIZE(t));
}
static int b(PyObject *o)
{
    PyErr_Format(PyExc_ValueError, "bad");
    return 0;
}
static int c(PyObject *o)
{
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return -1;
    PyObject *t = PySequence_Tuple(o);
    if (!t)
        return -1;
    return 0;
}
static int d(PyObject *o)
{
    double c = PyObject_IsTrue(o) ? 1.0 : 0.0;
    if (PyObject_IsTrue(o) < 0) return -1;
    int k = PyObject_IsTrue(o);
    if (k < 0) return -1;
    return 0;
}
