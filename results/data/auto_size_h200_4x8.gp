set terminal svg size 1200,420 dynamic
set output "results/figures/auto_size_h200_4x8.svg"
set multiplot layout 1,3 title "h200 4 x 8: time with synthesis / least over schedules (auto: points)"
set logscale x 2
set logscale y
set xlabel "per-GPU bytes"
set format x "2^{%L}"
set yrange [0.01:30]
set key top left font ",8"
set grid
set title "uniform"
plot "results/data/auto_size_h200_4x8_uniform.dat" using 1:2 with lines title "fast", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:3 with lines title "fanout", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:4 with lines title "nccl", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:5 with lines title "pxn", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:6 with lines title "spreadout", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:7 with lines title "hier", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:8 with points pt 7 ps 0.8 lc rgb "black" title "auto", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:9 with lines dt 2 lc rgb "gray" title "lower bound"
set title "zipf"
plot "results/data/auto_size_h200_4x8_zipf.dat" using 1:2 with lines title "fast", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:3 with lines title "fanout", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:4 with lines title "nccl", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:5 with lines title "pxn", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:6 with lines title "spreadout", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:7 with lines title "hier", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:8 with points pt 7 ps 0.8 lc rgb "black" title "auto", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:9 with lines dt 2 lc rgb "gray" title "lower bound"
set title "trace"
plot "results/data/auto_size_h200_4x8_trace.dat" using 1:2 with lines title "fast", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:3 with lines title "fanout", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:4 with lines title "nccl", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:5 with lines title "pxn", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:6 with lines title "spreadout", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:7 with lines title "hier", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:8 with points pt 7 ps 0.8 lc rgb "black" title "auto", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:9 with lines dt 2 lc rgb "gray" title "lower bound"
unset multiplot
set terminal pngcairo size 1200,420
set output "results/figures/auto_size_h200_4x8.png"
set multiplot layout 1,3 title "h200 4 x 8: time with synthesis / least over schedules (auto: points)"
set logscale x 2
set logscale y
set xlabel "per-GPU bytes"
set format x "2^{%L}"
set yrange [0.01:30]
set key top left font ",8"
set grid
set title "uniform"
plot "results/data/auto_size_h200_4x8_uniform.dat" using 1:2 with lines title "fast", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:3 with lines title "fanout", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:4 with lines title "nccl", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:5 with lines title "pxn", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:6 with lines title "spreadout", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:7 with lines title "hier", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:8 with points pt 7 ps 0.8 lc rgb "black" title "auto", \
     "results/data/auto_size_h200_4x8_uniform.dat" using 1:9 with lines dt 2 lc rgb "gray" title "lower bound"
set title "zipf"
plot "results/data/auto_size_h200_4x8_zipf.dat" using 1:2 with lines title "fast", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:3 with lines title "fanout", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:4 with lines title "nccl", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:5 with lines title "pxn", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:6 with lines title "spreadout", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:7 with lines title "hier", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:8 with points pt 7 ps 0.8 lc rgb "black" title "auto", \
     "results/data/auto_size_h200_4x8_zipf.dat" using 1:9 with lines dt 2 lc rgb "gray" title "lower bound"
set title "trace"
plot "results/data/auto_size_h200_4x8_trace.dat" using 1:2 with lines title "fast", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:3 with lines title "fanout", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:4 with lines title "nccl", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:5 with lines title "pxn", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:6 with lines title "spreadout", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:7 with lines title "hier", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:8 with points pt 7 ps 0.8 lc rgb "black" title "auto", \
     "results/data/auto_size_h200_4x8_trace.dat" using 1:9 with lines dt 2 lc rgb "gray" title "lower bound"
unset multiplot
