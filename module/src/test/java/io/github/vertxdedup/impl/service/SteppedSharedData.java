package io.github.vertxdedup.impl.service;

import io.vertx.core.Future;
import io.vertx.core.shareddata.Counter;
import io.vertx.core.shareddata.SharedData;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.Function;

/**
 * A Vert.x instance's shared data with a step of the test's between each read of a counter ({@link Counter#get}) and
 * its answer, so that a test can change the cluster, or hold the answer back, at that moment. Everything else is the
 * instance's own.
 */
final class SteppedSharedData {

  private SteppedSharedData() {}

  /**
   * @param real the instance's shared data
   * @param between run on each value a counter read finds; the read answers that value once this has completed, or
   *     fails if it fails
   * @return the shared data with the step
   */
  @SuppressWarnings("unchecked")
  static SharedData counterReads(SharedData real, Function<Long, Future<?>> between) {
    return proxy(SharedData.class, (method, args) -> {
      Object result = invoke(method, real, args);
      if (!method.getName().equals("getCounter")) {
        return result;
      }
      return ((Future<Counter>) result).map(counter -> proxy(Counter.class, (m, a) -> {
        Object answer = invoke(m, counter, a);
        return m.getName().equals("get")
            ? ((Future<Long>) answer).compose(read -> between.apply(read).map(read)) : answer;
      }));
    });
  }

  private interface Call {
    Object apply(Method method, Object[] args) throws Throwable;
  }

  @SuppressWarnings("unchecked")
  private static <T> T proxy(Class<T> type, Call call) {
    return (T) Proxy.newProxyInstance(SteppedSharedData.class.getClassLoader(), new Class<?>[] {type},
        (p, method, args) -> call.apply(method, args));
  }

  private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
